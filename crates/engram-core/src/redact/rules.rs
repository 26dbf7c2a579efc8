//! The rule table: each credential format or generic detector as a pattern, and how the value it
//! finds is vetted before it is redacted.

/// How a candidate value is vetted before it is redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
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
    /// Base64 whose decoded text holds a secret.
    Encoded,
}

pub(super) struct Rule {
    pub(super) id: &'static str,
    pub(super) pattern: &'static str,
    pub(super) check: Check,
}

const fn rule(id: &'static str, pattern: &'static str) -> Rule {
    Rule { id, pattern, check: Check::Always }
}

const fn checked(id: &'static str, pattern: &'static str, check: Check) -> Rule {
    Rule { id, pattern, check }
}

/// Up to five words naming which secret it is, after the secret's name: "the password for the
/// staging database is …", "the token we use for deploys: …".
macro_rules! which_one {
    () => {
        r"\s+(?:for|of|to|on|at|in|we|i|you|they|that|which|used)(?:\s+[^\s,.;:!?]+){1,5}?"
    };
}

// Pattern conventions (applied by `expand` before compiling): `\b` is an ASCII word boundary
// (so a token right after CJK text still starts a word), and `\w` / `\d` may only appear inside
// character classes, where they become ASCII ranges. The secret is the first of the groups
// `s`, `q1`, `q2`, `q3` that took part in the match (`q*` = a quoted value), else the whole match.
#[rustfmt::skip]
pub(super) const RULES: &[Rule] = &[
    // --- Private keys -------------------------------------------------------------------------
    // PEM/OpenSSH/PGP private key blocks, including one cut off before its END line.
    rule("private-key", r"-----BEGIN[A-Z0-9 _-]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 _-]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)"),
    rule("putty-private-key", r"(?m)Private-Lines:\s*\d+\r?\n(?P<s>(?:[A-Za-z0-9+/=]+\r?\n?)+)"),
    rule("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    // --- Cloud providers ----------------------------------------------------------------------
    rule("aws-access-key-id", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b"),
    rule("aws-secret-access-key", r#"(?i)\baws[\w.-]{0,20}?secret[\w.-]{0,20}?["']?\s*[:=]\s*["']?(?P<s>[A-Za-z0-9/+=]{40})\b"#),
    // A key id with its secret access key right after it and no label of its own: one secret.
    rule("aws-key-id-and-secret", r#"(?P<s>\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}[\s,;:|="'`]{1,6}[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#),
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
        r#"(?i)(?:password|passwd|pwd|passphrase|passcode|secret|token|credentials?|[\w.-]*auth|api[_. -]?key|apikey|(?:access|secret|private|signing|encryption|master|client|app|account|license|subscription|service|admin|deploy|webhook|session)[_. -]?key)["']?\s*(?:=|:|=>|:=)\s*(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|`(?P<q3>[^`\n]*)`|(?P<s>[^\s,'"`<>)\]}]{1,256}))"#,
        Check::Assigned,
    ),
    // `pass` is also an ordinary word ("mountain pass: Stelvio"), so its value must look generated.
    // Its bare value is `+`, not `{1,256}` as above: a second counted repetition of that Unicode
    // class made the rule set too large for the lazy DFA, and every search fell back to the
    // PikeVM (an 80 KB text: 0.14 ms -> 110 ms).
    checked(
        "pass-assignment",
        r#"(?i)(?:\bpass|[_.-]pass|(?-i:[a-z0-9]Pass))["']?\s*(?:=|:|=>|:=)\s*(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|`(?P<q3>[^`\n]*)`|(?P<s>[^\s,'"`<>)\]}]+))"#,
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
        concat!(r#"(?i)\b(?:password|passwd|pass word|passcode|pw)(?:"#, which_one!(), r#")?(?:\s+(?:is|was|are|:)|\s+(?:is\s+now|is\s+still|will\s+be|would\s+be|has\s+been\s+(?:set|changed)\s+to|is\s+set\s+to|set\s+to|changed\s+to))\s*[:\-]?\s+(?:"(?P<q1>[^"\n]+)"|'(?P<q2>[^'\n]+)'|“(?P<q3>[^”\n]+)”|(?P<s>[^\s,;]*[^\s,;.!?:)"'”]))"#),
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
        concat!(
            r#"(?i)\b(?:api[ _-]?key|secret(?:[ _-]?key)?|access[ _-]?key|access[ _-]?token|auth[ _-]?token|refresh[ _-]?token|client[ _-]?secret|token|key|credentials?|password|passwd|passcode)"#,
            "(?:(?:",
            which_one!(),
            r")?\s+(?:is|was|=|:)|",
            which_one!(),
            r#":)\s+["'`]?(?P<s>[\w\-.~+/=]{8,})"#,
        ),
        Check::Generated,
    ),
    // Chinese: 密码是… / 密码：… / 密钥为… / 令牌: …
    rule("prose-password-zh", r"(?:密码|口令|密钥|秘钥|令牌|私钥|访问令牌)\s*(?:是|为|：|:|=)\s*(?P<s>[^\s，。,;；]+)"),
    // A whole run of base64 of text: every fourth character encodes the top bits of an ASCII byte
    // ([A-Za-f]), which keeps random tokens and identifiers from being decoded at all.
    checked(
        "base64-encoded-secret",
        r"(?:^|[^A-Za-z0-9+/_-])(?P<s>(?:[A-Za-f][A-Za-z0-9+/_-]{3}){4,}(?:[A-Za-f][A-Za-z0-9+/_-]{1,2})?={0,2})(?:$|[^A-Za-z0-9+/_=-])",
        Check::Encoded,
    ),
    // A long, random-looking token within a few words after a secret word.
    checked(
        "entropy-near-secret-word",
        r"(?i)\b(?:token|secret|password|passwd|credential|credentials|api[ _-]?key|key|auth)s?\b[^\n]{0,40}?(?P<s>\b\w[\w\-+/=]{19,}\b)",
        Check::Entropy,
    ),
];

/// Rewrites the pattern conventions: `\w` and `\d` become ASCII classes (ranges inside a
/// class), `\b` an ASCII word boundary. Everything else is copied as written.
pub(super) fn expand(pattern: &str) -> String {
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
