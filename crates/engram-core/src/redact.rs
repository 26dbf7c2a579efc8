//! Secret redaction: the one redactor every memory write path runs (DESIGN §9 "Memory never
//! stores secrets"), here in the core so that native and edge builds share it.
//!
//! The rule set covers credential formats catalogued publicly by secret scanners (gitleaks'
//! default rules, secretlint's recommended preset) — written here as our own patterns — plus
//! generic detectors: credentials in URLs, `key = value` / `"key": "value"` / `.env` lines with
//! secret-like keys, authorization headers, passwords stated in prose, and high-entropy tokens
//! near secret words. Only the secret is replaced; its label stays (`API key: [REDACTED]`).
//!
//! Every pattern runs on the linear-time `regex` engine; a [`RegexSet`] over all rules finds in
//! one pass which rules can match at all, and only those are run for their positions.

use regex::{Captures, Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use std::sync::OnceLock;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Redaction passes at most: a pass only runs again when the previous one changed the text, so
/// clean text costs one scan and the result is a fixpoint (redacting it again changes nothing).
const MAX_PASSES: usize = 4;

/// How a candidate value is vetted before it is redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// The pattern is specific enough on its own.
    Always,
    /// A value assigned to a secret-like key: placeholders, variables and code references are
    /// not secrets (`token: string`, `password = os.environ[...]`, `key: ${KEY}`).
    Assigned,
    /// A value stated in prose ("my password is …"): the next word must not be ordinary English
    /// ("the password is expired").
    Prose,
    /// A token that must look machine-generated: digits and letters, or long mixed case.
    Generated,
    /// A long token near a secret word: high entropy, several character classes, not a hash.
    Entropy,
}

struct Rule {
    id: &'static str,
    pattern: &'static str,
    check: Check,
}

const fn rule(id: &'static str, pattern: &'static str) -> Rule {
    Rule { id, pattern, check: Check::Always }
}

const fn checked(id: &'static str, pattern: &'static str, check: Check) -> Rule {
    Rule { id, pattern, check }
}

// Pattern conventions (applied by `expand` before compiling): `\b` is an ASCII word boundary
// (so a token right after CJK text still starts a word), and `\w` / `\d` may only appear inside
// character classes, where they become ASCII ranges. The secret is the first of the groups
// `s`, `q1`, `q2`, `q3` that took part in the match (`q*` = a quoted value), else the whole match.
#[rustfmt::skip]
const RULES: &[Rule] = &[
    // --- Private keys -------------------------------------------------------------------------
    // PEM/OpenSSH/PGP private key blocks, including one cut off before its END line.
    rule("private-key", r"-----BEGIN[A-Z0-9 _-]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 _-]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)"),
    rule("putty-private-key", r"(?m)Private-Lines:\s*\d+\r?\n(?P<s>(?:[A-Za-z0-9+/=]+\r?\n?)+)"),
    rule("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    // --- Cloud providers ----------------------------------------------------------------------
    rule("aws-access-key-id", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b"),
    rule("aws-secret-access-key", r#"(?i)\baws[\w.-]{0,20}?secret[\w.-]{0,20}?["']?\s*[:=]\s*["']?(?P<s>[A-Za-z0-9/+=]{40})\b"#),
    rule("aws-mws-key", r"\bamzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    rule("gcp-api-key", r"\bAIza[\w-]{35}"),
    rule("google-oauth-client-secret", r"\bGOCSPX-[\w-]{24,}"),
    rule("google-oauth-access-token", r"\bya29\.[\w-]{20,}"),
    rule("google-oauth-refresh-token", r"\b1//0[\w-]{30,}"),
    rule("firebase-cloud-messaging-key", r"\bAAAA[\w-]{7}:[\w-]{100,}"),
    rule("azure-storage-account-key", r"(?i)\b(?:AccountKey|SharedAccessKey|AccessKey|SharedSecretValue)\s*=\s*(?P<s>[A-Za-z0-9+/]{20,}={0,2})"),
    rule("azure-sas-signature", r"[?&;\s]sig=(?P<s>[A-Za-z0-9%+/]{20,}(?:=|%3[Dd]){0,2})"),
    rule("azure-ad-client-secret", r"(?:^|[\\'`\s>=:(,)])(?P<s>[\w~.]{3}\dQ~[\w~.-]{31,34})(?:$|[\\'`\s<),])"),
    rule("alibaba-access-key-id", r"\bLTAI[A-Za-z0-9]{20}\b"),
    rule("digitalocean-pat", r"\bdop_v1_[a-f0-9]{64}\b"),
    rule("digitalocean-oauth-token", r"\bdoo_v1_[a-f0-9]{64}\b"),
    rule("digitalocean-refresh-token", r"\bdor_v1_[a-f0-9]{64}\b"),
    rule("heroku-api-key-v2", r"\bHRKU-AA[\w-]{58}"),
    rule("fly-io-token", r"\b(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})"),
    rule("cloudflare-origin-ca-key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b"),
    rule("scalingo-api-token", r"\btk-us-[\w-]{48}"),
    rule("render-api-key", r"\brnd_[A-Za-z0-9]{32}\b"),
    rule("netlify-pat", r"\bnfp_[A-Za-z0-9]{36}\b"),
    rule("supabase-access-token", r"\bsbp_[a-f0-9]{40}\b"),
    rule("neon-api-key", r"\bnapi_[a-z0-9]{64}\b"),
    rule("tailscale-key", r"\btskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}"),
    rule("openshift-user-token", r"\bsha256~[\w-]{43}"),
    rule("hashicorp-vault-service-token", r"\bhvs\.[\w-]{24,}"),
    rule("hashicorp-vault-batch-token", r"\bhvb\.[\w-]{24,}"),
    rule("hashicorp-vault-recovery-token", r"\bhvr\.[\w-]{24,}"),
    rule("terraform-cloud-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}"),
    rule("pulumi-access-token", r"\bpul-[a-f0-9]{40}\b"),
    rule("doppler-token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    rule("planetscale-token", r"\bpscale_tkn_[\w=.-]{32,64}"),
    rule("planetscale-oauth-token", r"\bpscale_oauth_[\w=.-]{32,64}"),
    rule("planetscale-password", r"\bpscale_pw_[\w=.-]{32,64}"),
    rule("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    rule("infracost-api-token", r"\bico-[A-Za-z0-9]{32}\b"),
    rule("prefect-api-token", r"\bpnu_[A-Za-z0-9]{36}\b"),
    rule("dynatrace-api-token", r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b"),
    rule("new-relic-user-api-key", r"\bNRAK-[A-Z0-9]{27}\b"),
    rule("new-relic-insert-key", r"\bNRII-[\w-]{32}"),
    rule("new-relic-browser-token", r"\bNRJS-[a-f0-9]{19}\b"),
    rule("grafana-api-key", r"\beyJrIjoi[A-Za-z0-9]{70,400}={0,3}"),
    rule("grafana-cloud-token", r"\bglc_[A-Za-z0-9+/]{32,400}={0,3}"),
    rule("grafana-service-account-token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"),
    rule("sentry-user-token", r"\bsntryu_[a-f0-9]{64}\b"),
    rule("sentry-org-token", r"\bsntrys_eyJ[A-Za-z0-9+/=_]{50,}"),
    rule("clickhouse-cloud-secret", r"\b4b1d[A-Za-z0-9]{38}\b"),
    // --- Source hosting and CI ----------------------------------------------------------------
    rule("github-pat", r"\bghp_[A-Za-z0-9]{36,}"),
    rule("github-oauth-token", r"\bgho_[A-Za-z0-9]{36,}"),
    rule("github-user-to-server-token", r"\bghu_[A-Za-z0-9]{36,}"),
    rule("github-server-to-server-token", r"\bghs_[A-Za-z0-9]{36,}"),
    rule("github-refresh-token", r"\bghr_[A-Za-z0-9]{36,}"),
    rule("github-fine-grained-pat", r"\bgithub_pat_\w{30,}"),
    rule("gitlab-pat", r"\bglpat-[\w.-]{20,}"),
    rule("gitlab-pipeline-trigger-token", r"\bglptt-[0-9a-f]{40}\b"),
    rule("gitlab-runner-registration-token", r"\bGR1348941[\w-]{20,}"),
    rule("gitlab-runner-auth-token", r"\bglrt-[\w.-]{20,}"),
    rule("gitlab-deploy-token", r"\bgldt-[\w-]{20,}"),
    rule("gitlab-feed-token", r"\bglft-[\w-]{20,}"),
    rule("gitlab-incoming-mail-token", r"\bglimt-[\w-]{25,}"),
    rule("gitlab-kubernetes-agent-token", r"\bglagent-[\w-]{50,}"),
    rule("gitlab-oauth-app-secret", r"\bgloas-[\w-]{64,}"),
    rule("gitlab-scim-token", r"\bglsoat-[\w-]{20,}"),
    rule("gitlab-feature-flag-token", r"\bglffct-[\w-]{20,}"),
    rule("gitlab-cicd-job-token", r"\bglcbt-[A-Za-z0-9]{1,5}_[\w-]{20,}"),
    rule("gitlab-session-cookie", r"\b_gitlab_session=(?P<s>[0-9a-z]{32})\b"),
    rule("bitbucket-app-password", r"\bATBB[A-Za-z0-9_=.-]{28,}"),
    rule("atlassian-api-token", r"\bATATT3[\w=-]{150,}"),
    rule("circleci-pat", r"\bCCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}\b"),
    rule("buildkite-token", r"\bbkua_[a-f0-9]{40}\b"),
    rule("sourcegraph-token", r"\bsgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}\b"),
    rule("sonarqube-token", r"\bsq[pua]_[a-f0-9]{40}\b"),
    rule("harness-token", r"\b(?:pat|sat)\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b"),
    rule("octopus-deploy-api-key", r"\bAPI-[A-Z0-9]{26}\b"),
    // --- Package registries -------------------------------------------------------------------
    rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    checked("npmrc-auth-token", r"(?i)_auth(?:Token)?\s*=\s*(?P<s>[^\s]{8,})", Check::Assigned),
    rule("pypi-upload-token", r"\bpypi-AgEIcHlwaS5vcmc[\w-]{50,}"),
    rule("rubygems-api-token", r"\brubygems_[a-f0-9]{48}\b"),
    rule("nuget-api-key", r"\boy2[a-z0-9]{43}\b"),
    rule("crates-io-token", r"\bcio[A-Za-z0-9]{32}\b"),
    rule("dockerhub-pat", r"\bdckr_pat_[\w-]{27,}"),
    rule("clojars-token", r"(?i)\bCLOJARS_[a-z0-9]{60}\b"),
    rule("artifactory-api-key", r"\bAKCp[A-Za-z0-9]{69}\b"),
    rule("artifactory-reference-token", r"\bcmVmd[A-Za-z0-9]{59}\b"),
    // --- Messaging and collaboration ----------------------------------------------------------
    rule("slack-bot-token", r"\bxoxb-[0-9]{8,13}-[\w-]{10,}"),
    rule("slack-user-token", r"\bxox[pe](?:-[0-9]{8,13}){3}-[A-Za-z0-9-]{20,}"),
    rule("slack-legacy-token", r"\bxox[aors]-[\w-]{10,}"),
    rule("slack-app-token", r"(?i)\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    rule("slack-config-token", r"(?i)\bxoxe\.xox[bp]-\d-[A-Z0-9]{100,}"),
    rule("slack-config-refresh-token", r"(?i)\bxoxe-\d-[A-Z0-9]{100,}"),
    rule("slack-webhook-url", r"(?i)\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"),
    rule("discord-bot-token", r"\b[MNO][A-Za-z\d]{23,27}\.[\w-]{6}\.[\w-]{27,40}"),
    rule("discord-webhook-url", r"(?i)\bdiscord(?:app)?\.com/api/webhooks/[0-9]{5,}/[\w-]{20,}"),
    rule("teams-webhook-url", r"(?i)\b[a-z0-9-]+\.webhook\.office\.com/webhookb2/[\w@/-]{40,}"),
    rule("telegram-bot-token", r"\b[0-9]{8,10}:A[\w-]{34}"),
    rule("linear-api-key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    rule("notion-token", r"\bntn_[0-9]{11}[A-Za-z0-9]{35}\b"),
    rule("notion-integration-secret", r"\bsecret_[A-Za-z0-9]{43}\b"),
    rule("figma-pat", r"\bfigd_[\w-]{40,}"),
    rule("airtable-pat", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    rule("typeform-token", r"\btfp_[\w.=-]{59,}"),
    rule("frameio-token", r"\bfio-u-[\w=-]{64}"),
    rule("contentful-pat", r"\bCFPAT-[\w-]{43}"),
    rule("readme-api-token", r"\brdme_[a-z0-9]{70}\b"),
    rule("onepassword-secret-key", r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"),
    rule("onepassword-service-token", r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}"),
    rule("dropbox-short-lived-token", r"\bsl\.[\w.=-]{130,}"),
    rule("intra42-client-secret", r"\bs-s4t2(?:ud|af)-[a-f0-9]{64}\b"),
    rule("maxmind-license-key", r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b"),
    rule("authress-access-key", r"\b(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[\w+/=-]{30,120}"),
    // --- Email and communications -------------------------------------------------------------
    rule("sendgrid-api-key", r"\bSG\.[\w-]{16,}\.[\w-]{16,}"),
    rule("sendinblue-api-key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b"),
    rule("mailgun-api-key", r"\bkey-[0-9a-zA-Z]{32}\b"),
    rule("mailgun-public-key", r"\bpubkey-[0-9a-f]{32}\b"),
    rule("mailchimp-api-key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"),
    rule("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b"),
    rule("postman-api-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    // --- Payments and commerce ----------------------------------------------------------------
    rule("stripe-secret-key", r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b"),
    rule("stripe-publishable-key", r"\bpk_(?:live|test)_[A-Za-z0-9]{10,99}\b"),
    rule("webhook-signing-secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    rule("square-access-token", r"\b(?:EAAA|sq0atp-)[\w-]{22,60}"),
    rule("square-oauth-secret", r"\bsq0csp-[\w-]{43}"),
    rule("shopify-access-token", r"\bshpat_[a-fA-F0-9]{32}\b"),
    rule("shopify-custom-app-token", r"\bshpca_[a-fA-F0-9]{32}\b"),
    rule("shopify-private-app-token", r"\bshppa_[a-fA-F0-9]{32}\b"),
    rule("shopify-shared-secret", r"\bshpss_[a-fA-F0-9]{32}\b"),
    rule("braintree-access-token", r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}\b"),
    rule("plaid-access-token", r"\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    rule("flutterwave-key", r"\bFLW(?:SECK|PUBK)(?:_TEST)?-[a-hA-H0-9]{12,}(?:-X)?"),
    rule("duffel-api-token", r"\bduffel_(?:test|live)_[\w=-]{43}"),
    rule("easypost-api-key", r"\bEZ[AT]K[A-Za-z0-9]{54}\b"),
    rule("shippo-api-token", r"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b"),
    rule("settlemint-token", r"\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b"),
    rule("adobe-client-secret", r"\bp8e-[A-Za-z0-9]{32}\b"),
    rule("facebook-access-token", r"\bEAA[A-Z][A-Za-z0-9]{80,}"),
    rule("instagram-access-token", r"\bIGQV[\w-]{100,}"),
    rule("twitter-bearer-token", r"\bA{22}[A-Za-z0-9%]{30,}"),
    rule("mapbox-secret-token", r"\bsk\.eyJ[\w-]{20,}\.[\w-]{20,}"),
    rule("yandex-api-key", r"\bAQVN[\w-]{35,38}\b"),
    rule("yandex-access-token", r"\bt1\.[\w-]+={0,2}\.[\w-]{86}={0,2}"),
    // --- AI providers -------------------------------------------------------------------------
    rule("anthropic-api-key", r"\bsk-ant-api03-[\w-]{20,}"),
    rule("anthropic-admin-key", r"\bsk-ant-admin01-[\w-]{20,}"),
    rule("openai-project-key", r"\bsk-(?:proj|svcacct|admin)-[\w-]{20,}"),
    rule("openai-legacy-key", r"\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b"),
    rule("openrouter-api-key", r"\bsk-or-v1-[a-f0-9]{64}\b"),
    rule("sk-style-api-key", r"\bsk-[A-Za-z0-9][\w-]{15,}"),
    rule("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    rule("huggingface-org-token", r"\bapi_org_[A-Za-z0-9]{30,}\b"),
    rule("perplexity-api-key", r"\bpplx-[A-Za-z0-9]{48}\b"),
    rule("groq-api-key", r"\bgsk_[A-Za-z0-9]{48,}\b"),
    rule("xai-api-key", r"\bxai-[A-Za-z0-9]{70,}\b"),
    rule("replicate-api-token", r"\br8_[A-Za-z0-9]{37}\b"),
    rule("langsmith-api-key", r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b"),
    rule("pinecone-api-key", r"\bpcsk_[\w]{40,}"),
    rule("elevenlabs-api-key", r"\bsk_[a-f0-9]{48}\b"),
    rule("fireworks-api-key", r"\bfw_[A-Za-z0-9]{24,}\b"),
    // --- Tokens with a structure --------------------------------------------------------------
    rule("jwt", r"\beyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]{5,}"),
    rule("jwt-unsigned-header", r"\beyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]{10,}"),
    // --- Generic detectors --------------------------------------------------------------------
    // Credentials inside URLs: scheme://user:password@host, also with an empty user (redis://:pw@).
    rule("url-credentials", r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'`]*:(?P<s>[^\s/@'`]+)@[^\s/@'`]"),
    // Authorization headers keep their scheme: `Authorization: Bearer [REDACTED]`.
    checked("authorization-header", r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|bot|apikey|sso-key)\s+)?(?P<s>[\w\-.~+/=:]{8,})"#, Check::Assigned),
    checked("bearer-token", r"(?i)\b(?:bearer|token)\s+(?P<s>[\w\-.~+/]{16,}=*)", Check::Generated),
    checked("basic-auth-credentials", r"\bBasic\s+(?P<s>[A-Za-z0-9+/]{12,}={0,2})", Check::Generated),
    rule("api-key-header", r#"(?i)\bx-(?:[a-z]+-)?(?:api-?key|auth-token|access-token|token|secret)["']?\s*:\s*["']?(?P<s>[\w\-.~+/=]{8,})"#),
    // curl -u user:password, sshpass -p password, .netrc lines.
    rule("curl-user-password", r#"\bcurl\b[^\n]*?\s(?:-u|--user)[\s=]*["']?[^\s:"']+:(?P<s>[^\s"']{3,})"#),
    rule("sshpass-password", r#"\bsshpass\s+-p\s*["']?(?P<s>[^\s"']{3,})"#),
    rule("netrc-password", r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<s>\S+)"),
    // key = value, key: value, "key": "value", key => value for secret-like keys.
    checked(
        "secret-assignment",
        r#"(?i)(?:password|passwd|pwd|passphrase|passcode|secret|token|credentials?|[\w.-]*auth|api[_. -]?key|apikey|(?:access|secret|private|signing|encryption|master|client|app|account|license|subscription|service|admin|deploy|webhook|session)[_. -]?key)["']?\s*(?:=|:|=>|:=)\s*(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|`(?P<q3>[^`\n]*)`|(?P<s>[^\s,;'"`<>)]{1,256}))"#,
        Check::Assigned,
    ),
    // `pass` is also an ordinary word ("mountain pass: Stelvio"), so its value must look generated.
    // Its bare value is `+`, not `{1,256}` as above: a second counted repetition of that Unicode
    // class made the rule set too large for the lazy DFA, and every search fell back to the
    // PikeVM (an 80 KB text: 0.14 ms -> 110 ms).
    checked(
        "pass-assignment",
        r#"(?i)(?:\bpass|[_.-]pass|(?-i:[a-z0-9]Pass))["']?\s*(?:=|:|=>|:=)\s*(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|`(?P<q3>[^`\n]*)`|(?P<s>[^\s,;'"`<>)]+))"#,
        Check::Generated,
    ),
    // .env / shell assignments anywhere in a line: NAME_KEY=, NAME_SECRET=, NAME_TOKEN=, NAME_PASSWORD=, ...
    checked(
        "env-secret-line",
        r#"\b[A-Z][A-Z0-9_]*(?:_KEY|_SECRET|_TOKEN|_PASSWORD|_PASSWD|_PWD|_PASS|_PASSPHRASE|_CREDENTIALS?|_AUTH|_DSN|PASSWORD|SECRET|TOKEN)[ \t]*=[ \t]*(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|(?P<s>[^\s#]{1,512}))"#,
        Check::Assigned,
    ),
    // Prose: "my password is hunter2", "the password for the NAS was 'x'", "PIN is 1234".
    checked(
        "prose-password",
        r#"(?i)\b(?:password|passwd|pass word|passcode|pw)(?:\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+)?[^\s,.;:]{1,40})?(?:\s+(?:is|was|are|:)|\s+(?:is\s+now|is\s+still|will\s+be|would\s+be|has\s+been\s+(?:set|changed)\s+to|is\s+set\s+to|set\s+to|changed\s+to))\s*[:\-]?\s+(?:"(?P<q1>[^"\n]+)"|'(?P<q2>[^'\n]+)'|“(?P<q3>[^”\n]+)”|(?P<s>[^\s,;]*[^\s,;.!?:)"'”]))"#,
        Check::Prose,
    ),
    checked(
        "prose-passphrase",
        r#"(?i)\b(?:passphrase|pass phrase|seed phrase|recovery phrase|mnemonic(?: phrase)?)\s+(?:is|was|:|=)\s*[:\-]?\s+(?:"(?P<q1>[^"\n]+)"|'(?P<q2>[^'\n]+)'|(?P<s>[^\n.;!?]*[^\s.;!?,]))"#,
        Check::Prose,
    ),
    rule("prose-pin", r"(?i)\b(?:pin|pin code|pin number)\s+(?:is|was|:)\s+(?P<s>[0-9]{4,8})\b"),
    checked(
        "prose-secret-value",
        r#"(?i)\b(?:api[ _-]?key|secret(?:[ _-]?key)?|access[ _-]?key|access[ _-]?token|auth[ _-]?token|refresh[ _-]?token|client[ _-]?secret|token|key|credentials?)\s+(?:is|was|=|:)\s+["'`]?(?P<s>[\w\-.~+/=]{8,})"#,
        Check::Generated,
    ),
    // Chinese: 密码是… / 密码：… / 密钥为… / 令牌: …
    rule("prose-password-zh", r"(?:密码|口令|密钥|秘钥|令牌|私钥|访问令牌)\s*(?:是|为|：|:|=)\s*(?P<s>[^\s，。,;；]+)"),
    // A long, random-looking token within a few words after a secret word.
    checked(
        "entropy-near-secret-word",
        r"(?i)\b(?:token|secret|password|passwd|credential|credentials|api[ _-]?key|key|auth)s?\b[^\n]{0,40}?(?P<s>\b\w[\w\-+/=]{19,}\b)",
        Check::Entropy,
    ),
];

/// One secret found: the rule that found it and its UTF-8 byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
}

/// The redacted text and how many secrets were replaced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Redacted {
    pub text: String,
    pub count: usize,
}

struct Compiled {
    set: RegexSet,
    rules: Vec<(&'static Rule, Regex)>,
}

/// Rewrites the pattern conventions: `\w` and `\d` become ASCII classes (ranges inside a
/// class), `\b` an ASCII word boundary. Everything else is copied as written.
fn expand(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 32);
    let mut in_class = 0usize;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('w') => out.push_str(if in_class > 0 { "0-9A-Za-z_" } else { "[0-9A-Za-z_]" }),
                Some('d') => out.push_str(if in_class > 0 { "0-9" } else { "[0-9]" }),
                Some('b') if in_class == 0 => out.push_str("(?-u:\\b)"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' => {
                in_class += 1;
                out.push(c);
            }
            ']' if in_class > 0 => {
                in_class -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Compiled-program bounds for the rule set (built once per process from fixed patterns).
const RULE_SIZE_LIMIT: usize = 32 << 20;

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let sources: Vec<String> = RULES.iter().map(|r| expand(r.pattern)).collect();
        let rules = RULES
            .iter()
            .zip(&sources)
            .map(|(r, src)| {
                let re = RegexBuilder::new(src)
                    .size_limit(RULE_SIZE_LIMIT)
                    .build()
                    .unwrap_or_else(|e| panic!("redaction rule {} does not compile: {e}", r.id));
                (r, re)
            })
            .collect();
        let set = RegexSetBuilder::new(&sources)
            .size_limit(RULE_SIZE_LIMIT * 4)
            .build()
            .unwrap_or_else(|e| panic!("redaction rule set does not compile: {e}"));
        Compiled { set, rules }
    })
}

/// Ids of every rule, in order (each is a credential format or a generic detector).
pub fn rule_ids() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|r| r.id)
}

/// Compiles the rule set now (it is otherwise compiled on first use).
pub fn warm_up() {
    compiled();
}

/// Every secret in `text`, by rule, in order of position (ranges of different rules may overlap).
pub fn find(text: &str) -> Vec<Finding> {
    let mut out = find_unwrapped(text);
    let breaks = wrap_breaks(text);
    if !breaks.is_empty() {
        out.extend(find_across_breaks(text, &breaks));
    }
    out.sort_by_key(|f| (f.start, f.end));
    out
}

fn find_unwrapped(text: &str) -> Vec<Finding> {
    let c = compiled();
    let mut out = Vec::new();
    for i in c.set.matches(text).iter() {
        let (rule, re) = &c.rules[i];
        for caps in re.captures_iter(text) {
            let Some((mut start, mut end, quoted)) = secret_span(&caps) else { continue };
            // `token%3D<secret>`: the span may start inside the percent-escape of its separator.
            let b = text.as_bytes();
            if start > 0
                && b[start - 1] == b'%'
                && end - start > 2
                && b[start..start + 2].iter().all(u8::is_ascii_hexdigit)
            {
                start += 2;
            }
            if rule.check == Check::Assigned && !quoted {
                end = query_value_end(text, start, end);
            }
            let value = &text[start..end];
            if value.is_empty() || value.contains(REDACTED) || !accept(rule.check, value, quoted) {
                continue;
            }
            if !quoted {
                end = token_end(text, start, end);
            }
            out.push(Finding { rule: rule.id, start, end });
        }
    }
    out
}

/// An unquoted assigned value ends before `&name=` (the next parameter of a query string or
/// form body); any other `&` is part of it (`password: Tr0ub4dor&3`).
fn query_value_end(text: &str, start: usize, end: usize) -> usize {
    let value = &text.as_bytes()[start..end];
    let mut at = 0;
    while let Some(i) = memchr::memchr(b'&', &value[at..]).map(|i| at + i) {
        let name = value[i + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || b"_.-[]".contains(c)).count();
        if name > 0 && value.get(i + 1 + name) == Some(&b'=') {
            return start + i;
        }
        at = i + 1;
    }
    end
}

fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The byte a JSON/JS escape at `i` stands for, and the escape's length: `\uXXXX`, `\xXX`, `\/`.
fn escaped_byte(b: &[u8], i: usize) -> Option<(u8, usize)> {
    let hex = |from: usize, n: usize| {
        let digits = b.get(from..from + n)?;
        let s = std::str::from_utf8(digits).ok()?;
        u32::from_str_radix(s, 16).ok().filter(|_| digits.iter().all(u8::is_ascii_hexdigit))
    };
    let (code, len) = match b.get(i + 1)? {
        b'u' => (hex(i + 2, 4)?, 6),
        b'x' => (hex(i + 2, 2)?, 4),
        b'/' => (u32::from(b'/'), 2),
        _ => return None,
    };
    u8::try_from(code).ok().filter(u8::is_ascii).map(|c| (c, len))
}

/// Where the token a match ends in ends: a redaction never leaves a tail of the token. The match
/// runs on over letters, digits, `_` and `-`; over `+ / = . ~` when the match already holds that
/// character and a token character follows; and over JSON/JS escapes of those (`\u0041`, `\/`).
fn token_end(text: &str, start: usize, end: usize) -> usize {
    let b = text.as_bytes();
    let matched = &b[start..end];
    let mut i = end;
    loop {
        let (c, len) = match b.get(i) {
            Some(b'\\') => match escaped_byte(b, i) {
                Some(e) => e,
                None => break,
            },
            Some(&c) => (c, 1),
            None => break,
        };
        let continues = is_token_byte(c)
            || (b"+/=.~".contains(&c)
                && (matched.contains(&c) || (c == b'/' && len == 2))
                && (b.get(i + len).is_some_and(|&n| is_token_byte(n) || n == b'\\') || c == b'='));
        if !continues {
            break;
        }
        i += len;
    }
    i
}

/// Line breaks that may split a token (a key wrapped by a terminal, an editor or a model): a
/// `\n` or `\r\n`, with a wrap hyphen before it, between a run of 8+ token characters that is
/// not words and a next line that opens with a generated-looking run standing on its own.
fn wrap_breaks(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let token = |c: &u8| is_token_byte(*c) || b"+/=".contains(c);
    let mut out = Vec::new();
    for nl in memchr::memchr_iter(b'\n', b) {
        let mut start = nl;
        if start > 0 && b[start - 1] == b'\r' {
            start -= 1;
        }
        if start > 0 && b[start - 1] == b'-' {
            start -= 1;
        }
        let before = b[..start].iter().rev().take(64).take_while(|c| token(c)).count();
        let after = b[nl + 1..].iter().take_while(|c| token(c) && **c != b'=').count();
        let next = &text[nl + 1..nl + 1 + after];
        let padding = b[nl + 1 + after..].iter().take_while(|&&c| c == b'=').count();
        let ends = b.get(nl + 1 + after + padding).is_none_or(|c| c.is_ascii_whitespace() || b"\"'`,;)]}.".contains(c));
        if before >= 8 && after >= 4 && ends && !wordy(&text[start - before..start]) && looks_generated(next) {
            out.push((start, nl + 1));
        }
    }
    out
}

/// Secrets that span one of `breaks`: found on the text with the breaks removed, mapped back.
fn find_across_breaks(text: &str, breaks: &[(usize, usize)]) -> Vec<Finding> {
    let mut joined = String::with_capacity(text.len());
    // Where each break sits in `joined`, and how many bytes were removed up to and including it.
    let mut at = Vec::with_capacity(breaks.len());
    let (mut copied, mut removed) = (0, 0);
    for &(s, e) in breaks {
        joined.push_str(&text[copied..s]);
        removed += e - s;
        at.push((joined.len(), removed));
        copied = e;
    }
    joined.push_str(&text[copied..]);
    let to_text = |pos: usize, after_break: bool| {
        let shift = at.iter().take_while(|&&(j, _)| j < pos || (after_break && j == pos)).last().map_or(0, |&(_, r)| r);
        pos + shift
    };
    find_unwrapped(&joined)
        .into_iter()
        .filter(|f| at.iter().any(|&(j, _)| f.start < j && j < f.end))
        .map(|f| Finding { rule: f.rule, start: to_text(f.start, true), end: to_text(f.end, false) })
        .collect()
}

/// `text` with every secret replaced by [`REDACTED`], labels kept. Idempotent.
pub fn redact(text: &str) -> Redacted {
    let mut current = std::borrow::Cow::Borrowed(text);
    let mut count = 0;
    for _ in 0..MAX_PASSES {
        let spans = merge(find(&current));
        if spans.is_empty() {
            break;
        }
        count += spans.len();
        let mut out = String::with_capacity(current.len());
        let mut copied = 0;
        for (s, e) in spans {
            out.push_str(&current[copied..s]);
            out.push_str(REDACTED);
            copied = e;
        }
        out.push_str(&current[copied..]);
        current = std::borrow::Cow::Owned(out);
    }
    Redacted { text: current.into_owned(), count }
}

/// Overlapping or touching ranges merged, in order.
fn merge(findings: Vec<Finding>) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(findings.len());
    for f in findings {
        match spans.last_mut() {
            Some((_, e)) if f.start <= *e => *e = (*e).max(f.end),
            _ => spans.push((f.start, f.end)),
        }
    }
    spans
}

/// The secret's range: the first secret group that took part, else the whole match. `true`
/// when the value was quoted.
fn secret_span(caps: &Captures<'_>) -> Option<(usize, usize, bool)> {
    for (name, quoted) in [("s", false), ("q1", true), ("q2", true), ("q3", true)] {
        if let Some(m) = caps.name(name) {
            return Some((m.start(), m.end(), quoted));
        }
    }
    caps.get(0).map(|m| (m.start(), m.end(), false))
}

fn accept(check: Check, value: &str, quoted: bool) -> bool {
    match check {
        Check::Always => true,
        Check::Assigned => assigned_value_is_secret(value, quoted),
        Check::Prose => prose_value_is_secret(value, quoted),
        Check::Generated => looks_generated(value),
        Check::Entropy => high_entropy(value),
    }
}

/// Words that follow "password:" or "token =" in docs and code but are not secrets.
#[rustfmt::skip]
const PLACEHOLDERS: &[&str] = &[
    "true", "false", "null", "nil", "none", "undefined", "string", "str", "number", "int", "integer", "bool",
    "boolean", "any", "object", "bytes", "optional", "required", "empty", "unset", "redacted", "hidden", "masked",
    "secret", "password", "token", "changeme", "the", "your", "this", "that", "see", "use", "and", "not", "yes", "no",
    "on", "off", "default", "env", "text", "value", "self", "new", "get", "set", "bearer", "basic", "digest", "await",
    "async", "yield", "typeof", "require", "import", "lambda", "function", "return", "const", "let", "var",
];

/// Code rather than a value: a call, an index, a block, or a dotted identifier path
/// (`cfg.password`, `process.env.API_KEY`).
fn is_code(v: &str) -> bool {
    v.contains(['(', '[', '{']) || (v.contains('.') && v.split('.').all(is_identifier))
}

/// Names that say what a value is rather than being it (`apiKey: apiKey`, `token = authToken`).
const NAMING_WORDS: &[&str] = &["key", "token", "secret", "pass", "pwd", "cred", "auth", "env", "config"];

fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn assigned_value_is_secret(value: &str, quoted: bool) -> bool {
    let v = value.trim();
    if v.is_empty() || (!quoted && v.chars().count() < 3) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if PLACEHOLDERS.contains(&lower.as_str()) {
        return false;
    }
    // Variables, templates and expressions: `$X`, `${X}`, `{{ x }}`, `%X%`, `<your-key>`, `f(x)`,
    // masks (`****`), file paths and plain URLs.
    let first = v.chars().next().unwrap_or(' ');
    if v.starts_with(['$', '{', '<', '%', '!', '@', '*', '#', '&', '~'])
        || v.contains(['(', '[', '{'])
        || (!quoted && is_code(v))
        || v.chars().all(|c| c == first)
        || ((v.starts_with('/') || v.starts_with("./") || v.starts_with("../")) && v[1..].contains('/'))
        || ((lower.starts_with("http://") || lower.starts_with("https://")) && !v.contains('@'))
    {
        return false;
    }
    if !quoted {
        // An identifier naming the secret rather than holding it.
        if is_identifier(v) && NAMING_WORDS.iter().any(|w| lower.contains(w)) {
            return false;
        }
        // A small count (`token: 5`).
        if v.len() < 4 && v.chars().all(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    true
}

/// Ordinary words that follow "the password is …" without being a password.
#[rustfmt::skip]
const PROSE_STOPWORDS: &[&str] = &[
    "a", "an", "the", "not", "no", "now", "still", "also", "too", "very", "being", "been", "in", "on", "at", "to",
    "by", "with", "from", "as", "for", "of", "my", "your", "our", "their", "his", "her", "its", "this", "that",
    "these", "those", "same", "different", "stored", "saved", "kept", "set", "reset", "changed", "required",
    "optional", "needed", "correct", "incorrect", "wrong", "right", "invalid", "valid", "expired", "missing", "empty",
    "weak", "strong", "secure", "insecure", "long", "short", "hidden", "secret", "private", "safe", "encrypted",
    "hashed", "case-sensitive", "unknown", "known", "written", "shown", "sent", "below", "above", "here", "there",
    "fine", "ok", "okay", "locked", "unlocked", "managed", "rotated", "generated", "random", "temporary", "protected",
    "shared", "used", "what", "which", "where", "how", "why", "who", "whatever", "something", "nothing", "anything",
    "one", "mandatory", "enforced", "disabled", "enabled", "so", "and", "or", "but", "if", "when", "then", "about",
    "it", "is", "was", "be", "same", "available", "unavailable", "needed", "asked", "requested", "prompted",
    "entered", "typed", "given", "provided", "updated", "working", "broken",
];

fn prose_value_is_secret(value: &str, quoted: bool) -> bool {
    let v = value.trim();
    if v.is_empty() || v.contains(REDACTED) {
        return false;
    }
    if quoted {
        return true;
    }
    let mut words =
        v.split_whitespace().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-').to_lowercase());
    let first = words.next().unwrap_or_default();
    if first.is_empty() || is_code(v.split_whitespace().next().unwrap_or("")) {
        return false;
    }
    // "is wrong" / "is stored in the vault" are statements; "is correct horse battery" is a
    // passphrase that happens to start with an ordinary word.
    let stop = |w: &str| PROSE_STOPWORDS.contains(&w);
    !(stop(&first) && words.next().is_none_or(|second| stop(&second)))
}

/// True when most of the value is runs of 5+ lower-case letters: words and identifiers
/// (`fetchAccessTokenFromServer`), not random tokens.
fn wordy(value: &str) -> bool {
    let mut in_runs = 0usize;
    let mut run = 0usize;
    for c in value.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_lowercase() {
            run += 1;
        } else {
            if run >= 5 {
                in_runs += run;
            }
            run = 0;
        }
    }
    in_runs * 2 > value.len()
}

/// Digits and letters together, or long with both cases, or base64 padding — and not words.
fn looks_generated(value: &str) -> bool {
    let v = value.trim_end_matches('=');
    if v.is_empty() || wordy(v) || is_code(v) {
        return false;
    }
    let has = |f: fn(&char) -> bool| v.chars().any(|c| f(&c));
    let letters = has(char::is_ascii_alphabetic);
    let digits = has(char::is_ascii_digit);
    let upper = has(char::is_ascii_uppercase);
    let lower = has(char::is_ascii_lowercase);
    (letters && digits) || (upper && lower && v.len() >= 16) || (value.ends_with('=') && v.len() >= 12)
}

/// Shannon entropy of the bytes, in bits per byte.
fn entropy(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in value.bytes() {
        counts[b as usize] += 1;
    }
    let n = value.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * p.log2()).sum()
}

/// A random-looking token: letters and digits, at least 3.5 bits per character, not a hex
/// digest or UUID (git SHAs, sha256 sums), not an identifier made of words.
fn high_entropy(value: &str) -> bool {
    let letters = value.chars().any(|c| c.is_ascii_alphabetic());
    let digits = value.chars().any(|c| c.is_ascii_digit());
    let hex_or_uuid = value.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    value.len() >= 20 && letters && digits && !hex_or_uuid && !wordy(value) && entropy(value) >= 3.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles_and_ids_are_unique() {
        let c = compiled();
        assert_eq!(c.rules.len(), RULES.len());
        let mut ids: Vec<&str> = rule_ids().collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate rule id");
    }

    #[test]
    fn expansion_keeps_classes_and_bare_digits_apart() {
        assert_eq!(expand(r"[\w-]{3}\d+\b\w"), r"[0-9A-Za-z_-]{3}[0-9]+(?-u:\b)[0-9A-Za-z_]");
        assert_eq!(expand(r"[\d\]]x\.\s"), r"[0-9\]]x\.\s");
    }

    #[test]
    fn labels_are_kept_and_count_reported() {
        let r = redact("API key: sk-proj-AbCdEf0123456789xyzXYZ0123 and password=hunter22");
        assert_eq!(r.text, "API key: [REDACTED] and password=[REDACTED]");
        assert_eq!(r.count, 2);
        assert_eq!(redact(&r.text), Redacted { text: r.text.clone(), count: 0 });
    }

    #[test]
    fn clean_text_is_borrowed_through_unchanged() {
        let r = redact("The user prefers tabs over spaces.");
        assert_eq!((r.text.as_str(), r.count), ("The user prefers tabs over spaces.", 0));
    }

    const KEY: &str = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4";

    #[test]
    fn the_separator_before_a_secret_is_kept() {
        assert_eq!(redact(&format!("key={KEY}")).text, "key=[REDACTED]");
        assert_eq!(redact(&format!("token%3D{KEY}")).text, "token%3D[REDACTED]");
        assert_eq!(redact(&format!("/cb?a=1&token%3D{KEY}&b=2")).text, "/cb?a=1&token%3D[REDACTED]&b=2");
        assert_eq!(redact(&format!("key: {KEY}")).text, "key: [REDACTED]");
        assert_eq!(redact(&format!("Authorization: Bearer {KEY}")).text, "Authorization: Bearer [REDACTED]");
    }

    #[test]
    fn a_redaction_leaves_no_tail_of_the_token() {
        let json = r#"{"k":"sk-proj-A1b2C3d4E5f6\u00417h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4"}"#;
        assert_eq!(redact(json).text, r#"{"k":"[REDACTED]"}"#);
        let slash = r#"{"k":"sk-proj-A1b2C3d4E5f6\/7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4\u0022, x"}"#;
        assert_eq!(redact(slash).text, r#"{"k":"[REDACTED]\u0022, x"}"#);
        assert_eq!(redact(&format!("{KEY}\\x41bc9 next")).text, "[REDACTED] next");
        // A fixed-length format followed by more of the token.
        assert_eq!(redact("npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5-x9Q2 ok").text, "[REDACTED] ok");
        // Sentence punctuation and the end of a JSON string are not part of the token.
        assert_eq!(redact(&format!("use {KEY}. Then")).text, "use [REDACTED]. Then");
        assert_eq!(redact(&format!(r#"["{KEY}\u0022"]"#)).text, r#"["[REDACTED]\u0022"]"#);
    }

    #[test]
    fn a_key_wrapped_across_lines_is_redacted_whole() {
        let split = "my key is sk-proj-A1b2C3d4E5f6G7h8I\n9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4";
        assert_eq!(redact(split).text, "my key is [REDACTED]");
        assert_eq!(redact("ghp_aB3dE5fG7hI9jK1l-\nM3nO5pQ7rS9tU1vW3xY5").text, "[REDACTED]");
        assert_eq!(
            redact("token:\r\nghp_aB3dE5fG7hI9jK1l-\r\nM3nO5pQ7rS9tU1vW3xY5\r\nbye").text,
            "token:\r\n[REDACTED]\r\nbye"
        );
        let three = "sk-proj-A1b2C3d4E5f6G7h8I\n9j0K1l2M3n4O5p\n6Q7r8S9t0U1v2W3x4 done";
        assert_eq!(redact(three).text, "[REDACTED] done");
    }

    #[test]
    fn the_line_after_a_secret_is_not_joined_to_it_when_it_is_prose_or_code() {
        for next in
            ["The user prefers tabs.", "AWS_S3_BUCKET=x2", "x2 = 5", "retries: 3", "export FOO=1", "- next item"]
        {
            let text = format!("API key: {KEY}\n{next}");
            assert_eq!(redact(&text).text, format!("API key: [REDACTED]\n{next}"));
        }
        let prose = "We call fetchUserData2\nv2024abc then stop.\nThe configuration\nFile1234 is fine.";
        assert_eq!(redact(prose).text, prose);
    }

    #[test]
    fn password_assignments_are_redacted_and_code_is_not() {
        assert_eq!(redact(r#"pass: "Tr0ub4dor&3xyz""#).text, r#"pass: "[REDACTED]""#);
        assert_eq!(redact("dbPass = Tr0ub4dor&3xyz").text, "dbPass = [REDACTED]");
        assert_eq!(redact("password = hunter2-ish").text, "password = [REDACTED]");
        assert_eq!(redact("password: Tr0ub4dor&3xyz").text, "password: [REDACTED]");
        assert_eq!(redact("/login?password=hunter22&user=bob").text, "/login?password=[REDACTED]&user=bob");
        for code in [
            "password: string",
            "pass: string;",
            "token = getToken()",
            "const pass = getPass(user);",
            "mountain pass: Stelvio",
            "bypass: abc123def",
            "passes: 3",
        ] {
            assert_eq!(redact(code).text, code);
        }
    }

    #[test]
    fn entropy_is_bits_per_byte() {
        assert!(entropy("aaaa") < 0.01);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
    }
}
