//! Fixtures shared by the redaction tests: a deterministic generator and one row per format.
#![allow(dead_code)]

use base64::Engine;

pub const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const UPNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
pub const LOWNUM: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
pub const HEX: &str = "0123456789abcdef";
pub const DIGITS: &str = "0123456789";
pub const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const BECH32: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";

/// Deterministic pseudo-random strings (xorshift), different on every call.
pub struct Gen(pub u64);

impl Gen {
    pub fn s(&mut self, alphabet: &str, n: usize) -> String {
        let a: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                a[(self.0 % a.len() as u64) as usize]
            })
            .collect()
    }

    /// Mixed letters and digits, guaranteed to contain both.
    pub fn mixed(&mut self, n: usize) -> String {
        format!("{}{}{}", self.s(UPNUM, 1), self.s(ALNUM, n - 2), self.s(DIGITS, 1))
    }

    pub fn uuid(&mut self) -> String {
        format!("{}-{}-{}-{}-{}", self.s(HEX, 8), self.s(HEX, 4), self.s(HEX, 4), self.s(HEX, 4), self.s(HEX, 12))
    }
}

/// `(rule, template with {} for the secret, secret, negative)`.
pub type Row = (&'static str, String, String, String);

fn row(id: &'static str, template: &str, secret: String, negative: &str) -> Row {
    (id, template.to_string(), secret, negative.to_string())
}

pub fn rows() -> Vec<Row> {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let g = &mut g;
    let t = "{}";
    vec![
        // Private keys
        row(
            "private-key",
            t,
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow{}\n{}\n-----END RSA PRIVATE KEY-----",
                g.s(B64, 58),
                g.s(B64, 64)
            ),
            "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
        ),
        row(
            "private-key",
            t,
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA{}", g.s(B64, 40)),
            "BEGIN PRIVATE KEY appears in PEM headers",
        ),
        row(
            "private-key",
            t,
            format!(
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF{}\n-----END PGP PRIVATE KEY BLOCK-----",
                g.s(B64, 60)
            ),
            "-----BEGIN PGP PUBLIC KEY BLOCK-----",
        ),
        row(
            "putty-private-key",
            "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n{}",
            g.s(B64, 44),
            "Private-Lines: none",
        ),
        row(
            "age-secret-key",
            t,
            format!("AGE-SECRET-KEY-1{}", g.s(BECH32, 58)),
            "age keys begin with AGE-SECRET-KEY-1 and then data",
        ),
        // Cloud
        row("aws-access-key-id", "aws id {} here", format!("AKIA{}", g.s(UPNUM, 16)), "AKIA1234 is too short"),
        row("aws-access-key-id", "role {}", format!("ASIA{}", g.s(UPNUM, 16)), "ASIA is a continent"),
        row(
            "aws-secret-access-key",
            "aws_secret_access_key = {}",
            g.s("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+", 40),
            "aws_secret_access_key = ${AWS_SECRET}",
        ),
        row("aws-mws-key", t, format!("amzn.mws.{}", g.uuid()), "amzn.mws.example"),
        row("gcp-api-key", t, format!("AIza{}", g.s(B64URL, 35)), "AIza is how Google keys begin"),
        row("google-oauth-client-secret", t, format!("GOCSPX-{}", g.s(B64URL, 28)), "GOCSPX-short"),
        row("google-oauth-access-token", "token={}", format!("ya29.{}", g.s(B64URL, 60)), "ya29.short"),
        row("google-oauth-refresh-token", t, format!("1//0{}", g.s(B64URL, 40)), "1//0abc"),
        row("firebase-cloud-messaging-key", t, format!("AAAA{}:{}", g.s(B64URL, 7), g.s(B64URL, 140)), "AAAA:short"),
        row(
            "azure-storage-account-key",
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
            format!("{}==", g.s(B64, 86)),
            "AccountKey=;AccountName=acme",
        ),
        row(
            "azure-sas-signature",
            "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={}",
            format!("{}%3D", g.s(ALNUM, 43)),
            "https://acme.blob.core.windows.net/c/f.txt?sig=abc",
        ),
        row(
            "azure-ad-client-secret",
            "value {} end",
            format!("xY78Q~{}", g.s("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.", 34)),
            "8Q~ is odd",
        ),
        row("alibaba-access-key-id", t, format!("LTAI{}", g.s(ALNUM, 20)), "LTAI short"),
        row("digitalocean-pat", t, format!("dop_v1_{}", g.s(HEX, 64)), "dop_v1_abc"),
        row("digitalocean-oauth-token", t, format!("doo_v1_{}", g.s(HEX, 64)), "doo_v1_abc"),
        row("digitalocean-refresh-token", t, format!("dor_v1_{}", g.s(HEX, 64)), "dor_v1_abc"),
        row("heroku-api-key-v2", t, format!("HRKU-AA{}", g.s(B64URL, 58)), "HRKU-AA"),
        row("fly-io-token", t, format!("fo1_{}", g.s(B64URL, 43)), "fo1_x"),
        row("cloudflare-origin-ca-key", t, format!("v1.0-{}-{}", g.s(HEX, 24), g.s(HEX, 146)), "v1.0-beta"),
        row("scalingo-api-token", t, format!("tk-us-{}", g.s(B64URL, 48)), "tk-us-east"),
        row("render-api-key", t, format!("rnd_{}", g.s(ALNUM, 32)), "rnd_seed"),
        row("netlify-pat", t, format!("nfp_{}", g.s(ALNUM, 36)), "nfp_x"),
        row("supabase-access-token", t, format!("sbp_{}", g.s(HEX, 40)), "sbp_1"),
        row("neon-api-key", t, format!("napi_{}", g.s(LOWNUM, 64)), "napi_module_register"),
        row("tailscale-key", t, format!("tskey-auth-{}-{}", g.s(ALNUM, 12), g.s(ALNUM, 30)), "tskey-auth-"),
        row("openshift-user-token", t, format!("sha256~{}", g.s(B64URL, 43)), "sha256~abc"),
        row("hashicorp-vault-service-token", t, format!("hvs.{}", g.s(B64URL, 90)), "hvs.example"),
        row("hashicorp-vault-batch-token", t, format!("hvb.{}", g.s(B64URL, 140)), "hvb.example"),
        row("hashicorp-vault-recovery-token", t, format!("hvr.{}", g.s(B64URL, 40)), "hvr.example"),
        row("terraform-cloud-token", t, format!("{}.atlasv1.{}", g.s(ALNUM, 14), g.s(B64URL, 64)), "app.atlasv1.json"),
        row("pulumi-access-token", t, format!("pul-{}", g.s(HEX, 40)), "pul-request"),
        row("doppler-token", t, format!("dp.pt.{}", g.s(ALNUM, 43)), "dp.pt.x"),
        row("planetscale-token", t, format!("pscale_tkn_{}", g.s(B64URL, 43)), "pscale_tkn_"),
        row("planetscale-oauth-token", t, format!("pscale_oauth_{}", g.s(B64URL, 43)), "pscale_oauth_"),
        row("planetscale-password", t, format!("pscale_pw_{}", g.s(B64URL, 43)), "pscale_pw_"),
        row("databricks-token", t, format!("dapi{}", g.s(HEX, 32)), "dapi docs"),
        row("infracost-api-token", t, format!("ico-{}", g.s(ALNUM, 32)), "ico-file"),
        row("prefect-api-token", t, format!("pnu_{}", g.s(ALNUM, 36)), "pnu_x"),
        row("dynatrace-api-token", t, format!("dt0c01.{}.{}", g.s(UPNUM, 24), g.s(UPNUM, 64)), "dt0c01.x"),
        row("new-relic-user-api-key", t, format!("NRAK-{}", g.s(UPNUM, 27)), "NRAK-1"),
        row("new-relic-insert-key", t, format!("NRII-{}", g.s(B64URL, 32)), "NRII-x"),
        row("new-relic-browser-token", t, format!("NRJS-{}", g.s(HEX, 19)), "NRJS-1"),
        row("grafana-api-key", t, format!("eyJrIjoi{}", g.s(ALNUM, 80)), "eyJrIjoi"),
        row("grafana-cloud-token", t, format!("glc_{}", g.s(B64, 40)), "glc_x"),
        row("grafana-service-account-token", t, format!("glsa_{}_{}", g.s(ALNUM, 32), g.s(HEX, 8)), "glsa_x"),
        row("sentry-user-token", t, format!("sntryu_{}", g.s(HEX, 64)), "sntryu_"),
        row("sentry-org-token", t, format!("sntrys_eyJ{}", g.s(B64, 80)), "sntrys_"),
        row("clickhouse-cloud-secret", t, format!("4b1d{}", g.s(ALNUM, 38)), "4b1d is hex"),
        // Source hosting and CI
        row("github-pat", "token {}", format!("ghp_{}", g.s(ALNUM, 36)), "ghp_short"),
        row("github-oauth-token", t, format!("gho_{}", g.s(ALNUM, 36)), "gho_short"),
        row("github-user-to-server-token", t, format!("ghu_{}", g.s(ALNUM, 36)), "ghu_short"),
        row("github-server-to-server-token", t, format!("ghs_{}", g.s(ALNUM, 36)), "ghs_short"),
        row("github-refresh-token", t, format!("ghr_{}", g.s(ALNUM, 36)), "ghr_short"),
        row(
            "github-fine-grained-pat",
            t,
            format!("github_pat_{}_{}", g.s(ALNUM, 22), g.s(ALNUM, 59)),
            "github_pat_ prefix",
        ),
        row("gitlab-pat", t, format!("glpat-{}", g.s(B64URL, 20)), "glpat-x"),
        row("gitlab-pipeline-trigger-token", t, format!("glptt-{}", g.s(HEX, 40)), "glptt-x"),
        row("gitlab-runner-registration-token", t, format!("GR1348941{}", g.s(B64URL, 20)), "GR1348941"),
        row("gitlab-runner-auth-token", t, format!("glrt-{}", g.s(B64URL, 20)), "glrt-x"),
        row("gitlab-deploy-token", t, format!("gldt-{}", g.s(B64URL, 20)), "gldt-x"),
        row("gitlab-feed-token", t, format!("glft-{}", g.s(B64URL, 20)), "glft-x"),
        row("gitlab-incoming-mail-token", t, format!("glimt-{}", g.s(B64URL, 25)), "glimt-x"),
        row("gitlab-kubernetes-agent-token", t, format!("glagent-{}", g.s(B64URL, 50)), "glagent-x"),
        row("gitlab-oauth-app-secret", t, format!("gloas-{}", g.s(B64URL, 64)), "gloas-x"),
        row("gitlab-scim-token", t, format!("glsoat-{}", g.s(B64URL, 20)), "glsoat-x"),
        row("gitlab-feature-flag-token", t, format!("glffct-{}", g.s(B64URL, 20)), "glffct-x"),
        row("gitlab-cicd-job-token", t, format!("glcbt-{}_{}", g.s(ALNUM, 3), g.s(B64URL, 20)), "glcbt-x"),
        row("gitlab-session-cookie", "Cookie: _gitlab_session={}", g.s(LOWNUM, 32), "_gitlab_session="),
        row("bitbucket-app-password", t, format!("ATBB{}", g.s(ALNUM, 32)), "ATBB"),
        row("atlassian-api-token", t, format!("ATATT3{}", g.s(B64URL, 180)), "ATATT3x"),
        row("circleci-pat", t, format!("CCIPAT_{}_{}", g.s(ALNUM, 22), g.s(HEX, 40)), "CCIPAT_"),
        row("buildkite-token", t, format!("bkua_{}", g.s(HEX, 40)), "bkua_"),
        row("sourcegraph-token", t, format!("sgp_{}_{}", g.s(HEX, 16), g.s(HEX, 40)), "sgp_local_"),
        row("sonarqube-token", t, format!("sqp_{}", g.s(HEX, 40)), "sqp_"),
        row(
            "harness-token",
            t,
            format!("pat.{}.{}.{}", g.s(B64URL, 22), g.s(ALNUM, 24), g.s(ALNUM, 20)),
            "pat.example",
        ),
        row("octopus-deploy-api-key", t, format!("API-{}", g.s(UPNUM, 26)), "API-KEY"),
        // Package registries
        row("npm-token", t, format!("npm_{}", g.s(ALNUM, 36)), "npm_config_cache"),
        row(
            "npmrc-auth-token",
            "//registry.npmjs.org/:_authToken={}",
            g.s(B64URL, 36),
            "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
        ),
        row("pypi-upload-token", t, format!("pypi-AgEIcHlwaS5vcmc{}", g.s(B64URL, 60)), "pypi-AgEI"),
        row("rubygems-api-token", t, format!("rubygems_{}", g.s(HEX, 48)), "rubygems_org"),
        row("nuget-api-key", t, format!("oy2{}", g.s(LOWNUM, 43)), "oy2 short"),
        row("crates-io-token", t, format!("cio{}", g.s(ALNUM, 32)), "cio"),
        row("dockerhub-pat", t, format!("dckr_pat_{}", g.s(B64URL, 27)), "dckr_pat_"),
        row("clojars-token", t, format!("CLOJARS_{}", g.s(LOWNUM, 60)), "CLOJARS_"),
        row("artifactory-api-key", t, format!("AKCp{}", g.s(ALNUM, 69)), "AKCp"),
        row("artifactory-reference-token", t, format!("cmVmd{}", g.s(ALNUM, 59)), "cmVmd"),
        // Messaging and collaboration
        row("slack-bot-token", t, format!("xoxb-{}-{}-{}", g.s(DIGITS, 12), g.s(DIGITS, 12), g.s(ALNUM, 24)), "xoxb-"),
        row(
            "slack-user-token",
            t,
            format!("xoxp-{}-{}-{}-{}", g.s(DIGITS, 12), g.s(DIGITS, 12), g.s(DIGITS, 12), g.s(HEX, 32)),
            "xoxp-1",
        ),
        row("slack-legacy-token", t, format!("xoxa-2-{}", g.s(ALNUM, 30)), "xoxo-gossip girl"),
        row("slack-app-token", t, format!("xapp-1-A{}-{}-{}", g.s(UPNUM, 10), g.s(DIGITS, 13), g.s(HEX, 64)), "xapp-1"),
        row("slack-config-token", t, format!("xoxe.xoxp-1-{}", g.s(UPNUM, 160)), "xoxe.xoxp-1-"),
        row("slack-config-refresh-token", t, format!("xoxe-1-{}", g.s(UPNUM, 146)), "xoxe-1-short"),
        row(
            "slack-webhook-url",
            "https://{}",
            format!("hooks.slack.com/services/T{}/B{}/{}", g.s(UPNUM, 8), g.s(UPNUM, 8), g.s(ALNUM, 24)),
            "https://hooks.slack.com/services/",
        ),
        row("discord-bot-token", t, format!("M{}.{}.{}", g.s(ALNUM, 25), g.s(B64URL, 6), g.s(B64URL, 38)), "M.x.y"),
        row(
            "discord-webhook-url",
            "https://{}",
            format!("discord.com/api/webhooks/{}/{}", g.s(DIGITS, 18), g.s(B64URL, 68)),
            "https://discord.com/api/webhooks/",
        ),
        row(
            "teams-webhook-url",
            "https://{}",
            format!(
                "acme.webhook.office.com/webhookb2/{}@{}/IncomingWebhook/{}/{}",
                g.uuid(),
                g.uuid(),
                g.s(HEX, 32),
                g.uuid()
            ),
            "https://acme.webhook.office.com/webhookb2/",
        ),
        row("telegram-bot-token", "bot {}", format!("{}:AA{}", g.s(DIGITS, 10), g.s(B64URL, 33)), "12345:AAx"),
        row("linear-api-key", t, format!("lin_api_{}", g.s(ALNUM, 40)), "lin_api_"),
        row("notion-token", t, format!("ntn_{}{}", g.s(DIGITS, 11), g.s(ALNUM, 35)), "ntn_"),
        row("notion-integration-secret", t, format!("secret_{}", g.s(ALNUM, 43)), "secret_sauce"),
        row("figma-pat", t, format!("figd_{}", g.s(B64URL, 40)), "figd_"),
        row("airtable-pat", t, format!("pat{}.{}", g.s(ALNUM, 14), g.s(HEX, 64)), "pattern.match"),
        row("typeform-token", t, format!("tfp_{}", g.s(B64URL, 59)), "tfp_"),
        row("frameio-token", t, format!("fio-u-{}", g.s(B64URL, 64)), "fio-u-"),
        row("contentful-pat", t, format!("CFPAT-{}", g.s(B64URL, 43)), "CFPAT-"),
        row("readme-api-token", t, format!("rdme_{}", g.s(LOWNUM, 70)), "rdme_"),
        row(
            "onepassword-secret-key",
            t,
            format!("A3-{}-{}-{}-{}-{}", g.s(UPNUM, 6), g.s(UPNUM, 11), g.s(UPNUM, 5), g.s(UPNUM, 5), g.s(UPNUM, 5)),
            "A3-paper",
        ),
        row("onepassword-service-token", t, format!("ops_eyJ{}", g.s(B64, 120)), "ops_eyJ"),
        row("dropbox-short-lived-token", t, format!("sl.{}", g.s(B64URL, 140)), "sl.x"),
        row("intra42-client-secret", t, format!("s-s4t2ud-{}", g.s(HEX, 64)), "s-s4t2ud-"),
        row("maxmind-license-key", t, format!("{}_{}_mmk", g.s(ALNUM, 6), g.s(ALNUM, 29)), "abc_mmk"),
        row(
            "authress-access-key",
            t,
            format!("sc_{}.{}.acc_{}.{}", g.s(LOWNUM, 10), g.s(LOWNUM, 5), g.s(LOWNUM, 16), g.s(B64URL, 40)),
            "sc_x.y",
        ),
        // Email and communications
        row("sendgrid-api-key", t, format!("SG.{}.{}", g.s(B64URL, 22), g.s(B64URL, 43)), "SG.x"),
        row("sendinblue-api-key", t, format!("xkeysib-{}-{}", g.s(HEX, 64), g.s(ALNUM, 16)), "xkeysib-"),
        row("mailgun-api-key", t, format!("key-{}", g.s(ALNUM, 32)), "key-value"),
        row("mailgun-public-key", t, format!("pubkey-{}", g.s(HEX, 32)), "pubkey-"),
        row("mailchimp-api-key", t, format!("{}-us12", g.s(HEX, 32)), "abc-us12"),
        row("twilio-api-key", t, format!("SK{}", g.s(HEX, 32)), "SKU-123"),
        row("postman-api-key", t, format!("PMAK-{}-{}", g.s(HEX, 24), g.s(HEX, 34)), "PMAK-"),
        // Payments and commerce
        row("stripe-secret-key", t, format!("sk_live_{}", g.s(ALNUM, 24)), "sk_live_"),
        row("stripe-secret-key", t, format!("rk_test_{}", g.s(ALNUM, 24)), "rk_test_"),
        row("stripe-publishable-key", t, format!("pk_test_{}", g.s(ALNUM, 24)), "pk_test_"),
        row("webhook-signing-secret", t, format!("whsec_{}", g.s(ALNUM, 32)), "whsec_"),
        row("square-access-token", t, format!("sq0atp-{}", g.s(B64URL, 22)), "sq0atp-"),
        row("square-oauth-secret", t, format!("sq0csp-{}", g.s(B64URL, 43)), "sq0csp-"),
        row("shopify-access-token", t, format!("shpat_{}", g.s(HEX, 32)), "shpat_"),
        row("shopify-custom-app-token", t, format!("shpca_{}", g.s(HEX, 32)), "shpca_"),
        row("shopify-private-app-token", t, format!("shppa_{}", g.s(HEX, 32)), "shppa_"),
        row("shopify-shared-secret", t, format!("shpss_{}", g.s(HEX, 32)), "shpss_"),
        row(
            "braintree-access-token",
            t,
            format!("access_token$production${}${}", g.s(LOWNUM, 16), g.s(HEX, 32)),
            "access_token$production$",
        ),
        row("plaid-access-token", t, format!("access-sandbox-{}", g.uuid()), "access-sandbox-"),
        row("flutterwave-key", t, format!("FLWSECK_TEST-{}-X", g.s(HEX, 32)), "FLWSECK_TEST-"),
        row("duffel-api-token", t, format!("duffel_test_{}", g.s(B64URL, 43)), "duffel_test_"),
        row("easypost-api-key", t, format!("EZAK{}", g.s(ALNUM, 54)), "EZAK"),
        row("shippo-api-token", t, format!("shippo_live_{}", g.s(HEX, 40)), "shippo_live_"),
        row("settlemint-token", t, format!("sm_pat_{}", g.s(ALNUM, 16)), "sm_pat_"),
        row("adobe-client-secret", t, format!("p8e-{}", g.s(ALNUM, 32)), "p8e-"),
        row("facebook-access-token", t, format!("EAAC{}", g.s(ALNUM, 120)), "EAACx"),
        row("instagram-access-token", t, format!("IGQV{}", g.s(B64URL, 150)), "IGQV"),
        row("twitter-bearer-token", t, format!("{}{}", "A".repeat(22), g.s(ALNUM, 80)), "AAAA"),
        row("mapbox-secret-token", t, format!("sk.eyJ{}.{}", g.s(B64URL, 60), g.s(B64URL, 22)), "sk.eyJ"),
        row("yandex-api-key", t, format!("AQVN{}", g.s(B64URL, 36)), "AQVN"),
        row("yandex-access-token", t, format!("t1.{}.{}", g.s(B64URL, 20), g.s(B64URL, 86)), "t1.x"),
        // AI providers
        row("anthropic-api-key", t, format!("sk-ant-api03-{}AA", g.s(B64URL, 93)), "sk-ant-api03-"),
        row("anthropic-admin-key", t, format!("sk-ant-admin01-{}AA", g.s(B64URL, 93)), "sk-ant-admin01-"),
        row("openai-project-key", "API key: {}", format!("sk-proj-{}", g.s(B64URL, 100)), "sk-proj-x"),
        row("openai-legacy-key", t, format!("sk-{}T3BlbkFJ{}", g.s(ALNUM, 20), g.s(ALNUM, 20)), "T3BlbkFJ"),
        row("openrouter-api-key", t, format!("sk-or-v1-{}", g.s(HEX, 64)), "sk-or-v1-"),
        row("sk-style-api-key", t, format!("sk-{}", g.s(ALNUM, 32)), "sk-learn is a library"),
        row("huggingface-token", t, format!("hf_{}", g.s(ALNUM, 34)), "hf_hub_download"),
        row("huggingface-org-token", t, format!("api_org_{}", g.s(ALNUM, 34)), "api_org_"),
        row("perplexity-api-key", t, format!("pplx-{}", g.s(ALNUM, 48)), "pplx-"),
        row("groq-api-key", t, format!("gsk_{}", g.s(ALNUM, 52)), "gsk_"),
        row("xai-api-key", t, format!("xai-{}", g.s(ALNUM, 80)), "xai-grok"),
        row("replicate-api-token", t, format!("r8_{}", g.s(ALNUM, 37)), "r8_x"),
        row("langsmith-api-key", t, format!("lsv2_pt_{}_{}", g.s(HEX, 32), g.s(HEX, 10)), "lsv2_pt_"),
        row("pinecone-api-key", t, format!("pcsk_{}", g.s(ALNUM, 60)), "pcsk_"),
        row("elevenlabs-api-key", t, format!("sk_{}", g.s(HEX, 48)), "sk_"),
        row("fireworks-api-key", t, format!("fw_{}", g.s(ALNUM, 24)), "fw_"),
        // Structured tokens
        row("jwt", "jwt {}", format!("eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}", g.s(B64URL, 30), g.s(B64URL, 43)), "eyJ.eyJ.x"),
        row(
            "jwt-unsigned-header",
            t,
            format!("eyJhbGciOiJSU0EtT0FFUCJ9.{}.{}", g.s(B64URL, 40), g.s(B64URL, 30)),
            "eyJhb.x.y",
        ),
        // Generic detectors
        row(
            "url-credentials",
            "postgres://admin:{}@db.example.com/app",
            g.mixed(12),
            "https://db.example.com:5432/app",
        ),
        row(
            "url-credentials",
            "REDIS_URL=redis://:{}@cache.internal:6379/0",
            g.mixed(16),
            "redis://cache.internal:6379/0",
        ),
        row(
            "url-credentials",
            "mongodb+srv://app:{}@cluster0.example.net/db",
            g.mixed(14),
            "mongodb+srv://cluster0.example.net/db",
        ),
        row("url-credentials", "amqp://guest:{}@rabbit:5672", g.mixed(10), "git@github.com:owner/repo.git"),
        row("authorization-header", "Authorization: Bearer {}", g.s(B64URL, 40), "Authorization: Bearer ${TOKEN}"),
        row(
            "authorization-header",
            "-H 'Authorization: Basic {}'",
            "YWRtaW46aHVudGVyMnNlY3JldA==".into(),
            "Authorization: required",
        ),
        row("bearer-token", "use bearer {} for calls", g.mixed(32), "bearer tokens are short-lived"),
        row("basic-auth-credentials", "header Basic {}", "dXNlcjpzM2NyM3RQYXNz".into(), "Basic functionality works"),
        row("api-key-header", "X-API-Key: {}", g.mixed(32), "X-API-Key: <your key>"),
        row(
            "curl-user-password",
            "curl -u admin:{} https://api.example.com",
            "s3cretPass!".into(),
            "curl -u admin https://api.example.com",
        ),
        row("sshpass-password", "sshpass -p {} ssh root@host", "Tr0ub4dor&3".into(), "install sshpass first"),
        row(
            "netrc-password",
            "machine api.example.com login bob password {}",
            "b0bSecret99".into(),
            "machine api.example.com login bob",
        ),
        row("secret-assignment", r#"config {"password": "{}"}"#, "s3cr3t-value".into(), "password: string"),
        row("secret-assignment", "api_key: {}", "9f8e7d6c5b4a39281706".into(), "token: ${API_TOKEN}"),
        row("secret-assignment", "client_secret = '{}'", g.mixed(24), "apiKey: apiKey,"),
        row(
            "secret-assignment",
            "Server=db;User Id=sa;Password={};",
            "P@ssw0rd!".into(),
            r#"password = os.environ["PW"]"#,
        ),
        row("secret-assignment", "my wifi password: {}", "sunshine42".into(), "max_tokens: 4096"),
        row("secret-assignment", "webhook_key => {}", g.mixed(20), "secret: true"),
        row(
            "pass-assignment",
            r#"smtp: { user: "bob", pass: "{}" }"#,
            "Tr0ub4dor&3xyz".into(),
            "mountain pass: Stelvio",
        ),
        row("pass-assignment", "dbPass = {}", g.mixed(16), "bypass: abc123def"),
        row("env-secret-line", "STRIPE_KEY={}", g.mixed(24), "PRIMARY_KEY_COLUMN=id"),
        row("env-secret-line", "export SLACK_SIGNING_SECRET={}", g.s(HEX, 32), "SECRET_NAME="),
        row("env-secret-line", "DATABASE_PASSWORD='{}'", "hunter2!".into(), "DATABASE_HOST=db.internal"),
        row("prose-password", "my password is {}", "hunter2".into(), "the password is expired"),
        row(
            "prose-password",
            "The password for the NAS was '{}' until May",
            "blue-Falcon!".into(),
            "my password is not stored here",
        ),
        row(
            "prose-passphrase",
            "the passphrase is {}",
            "correct horse battery staple".into(),
            "the passphrase is stored in the vault",
        ),
        row("prose-pin", "my PIN is {}", "4921".into(), "the pin is connected to ground"),
        row("prose-secret-value", "the API key is {}", "abc-123456xyz".into(), "the token is expired"),
        row("prose-password-zh", "我的密码是 {}，别忘了", "abc123xyz".into(), "用户喜欢喝咖啡"),
        row(
            "entropy-near-secret-word",
            "here is the staging credential for you, {}",
            g.mixed(32),
            "the secret recipe uses 3 eggs",
        ),
        row(
            "aws-key-id-and-secret",
            "keys: {}",
            format!("AKIA{}, {}", g.s(UPNUM, 16), g.s(B64, 40)),
            "AKIA and then forty characters of plain words follow here",
        ),
        row("base64-encoded-secret", "OpenAI: {}", base64(&format!("sk-proj-{}", g.s(B64URL, 48))), &base64("prose")),
        row("base64-encoded-secret", "{}", base64(&format!("password: {}", g.mixed(12))), &base64("password: string")),
    ]
}

pub fn base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The encodings a secret may hide behind in a memory write. `decode` is what a reader of the
/// redacted text recovers from it.
#[derive(Debug, Clone, Copy)]
pub enum Encoding {
    /// A JSON string: `\/`, `\"`, `\n` and `\u0061` escapes.
    Json,
    /// Percent-encoding of everything but letters, digits and `-_.~`.
    Percent,
    /// Full-width forms of every ASCII character, the ideographic space for a space.
    FullWidth,
    /// Zero-width and other invisible characters inside the secret.
    ZeroWidth,
    /// Base64 of the whole text.
    Base64,
}

pub const ENCODINGS: [Encoding; 5] =
    [Encoding::Json, Encoding::Percent, Encoding::FullWidth, Encoding::ZeroWidth, Encoding::Base64];

const INVISIBLE: [char; 6] = ['\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{feff}', '\u{ad}'];

impl Encoding {
    /// `text`, which holds `secret`, encoded; `seed` varies where invisible characters go.
    pub fn encode(self, text: &str, secret: &str, seed: usize) -> String {
        match self {
            Encoding::Json => text.chars().map(json_escape).collect(),
            Encoding::Percent => text
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect(),
            Encoding::FullWidth => text
                .chars()
                .map(|c| match c {
                    ' ' => '\u{3000}',
                    '!'..='~' => char::from_u32(c as u32 + 0xfee0).unwrap(),
                    c => c,
                })
                .collect(),
            Encoding::ZeroWidth => {
                let every = 1 + seed % 5;
                let mut spread = String::new();
                for (i, c) in secret.chars().enumerate() {
                    spread.push(c);
                    if i % every == every - 1 {
                        spread.push(INVISIBLE[(seed + i) % INVISIBLE.len()]);
                    }
                }
                text.replacen(secret, &spread, 1)
            }
            Encoding::Base64 => base64(text),
        }
    }

    pub fn decode(self, text: &str) -> String {
        match self {
            Encoding::Json => serde_json::from_str(&format!("\"{text}\"")).expect("redaction keeps JSON escapes whole"),
            Encoding::Percent => {
                let b = text.as_bytes();
                let mut out = Vec::new();
                let mut i = 0;
                while i < b.len() {
                    match b.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()) {
                        Some(byte) if b[i] == b'%' => {
                            out.push(byte);
                            i += 3;
                        }
                        _ => {
                            out.push(b[i]);
                            i += 1;
                        }
                    }
                }
                String::from_utf8_lossy(&out).into_owned()
            }
            Encoding::FullWidth => text
                .chars()
                .map(|c| match c {
                    '\u{3000}' => ' ',
                    '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap(),
                    c => c,
                })
                .collect(),
            Encoding::ZeroWidth => text.chars().filter(|c| !INVISIBLE.contains(c)).collect(),
            // The text as it stands and every base64 run in it decoded.
            Encoding::Base64 => {
                let mut out = text.to_string();
                for run in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '/')) {
                    if let Ok(bytes) = base64::engine::general_purpose::STANDARD_NO_PAD.decode(run) {
                        out.push('\n');
                        out.push_str(&String::from_utf8_lossy(&bytes));
                    }
                }
                out
            }
        }
    }
}

fn json_escape(c: char) -> String {
    match c {
        '"' => "\\\"".into(),
        '\\' => "\\\\".into(),
        '/' => "\\/".into(),
        '\n' => "\\n".into(),
        'a' => "\\u0061".into(),
        c if c.is_control() => format!("\\u{:04x}", c as u32),
        c => c.to_string(),
    }
}
