//! `sandboxExecute`: a shell command confined by `engram_sandbox`, off the JavaScript thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use engram_sandbox::{Outcome, Policy, SandboxError};
use napi::bindgen_prelude::{AsyncTask, Either};
use napi::{Env, Task};
use napi_derive::napi;

use crate::{ErrorData, Failure};

/// What `sandboxExecute` may change from the default policy (`engram_sandbox::Policy::new`).
#[napi(object)]
pub struct SandboxOptions {
    pub root: String,
    pub cwd: Option<String>,
    /// The command may read the root but change nothing in it.
    pub read_only: Option<bool>,
    pub timeout_ms: Option<f64>,
    pub output_cap: Option<u32>,
    /// Extra variables, `NAME=value` each.
    pub env: Option<Vec<String>>,
    /// No confinement at all (`engram_sandbox::Policy::unconfined`).
    pub unconfined: Option<bool>,
}

#[napi(object)]
pub struct SandboxOutcome {
    pub output: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub truncated: bool,
    pub timed_out: bool,
    pub cancelled: bool,
}

#[napi(object)]
pub struct SandboxSupport {
    pub landlock_abi: i32,
    pub namespaces: bool,
    /// What the kernel lacks for `sandboxExecute`, when it lacks something.
    pub missing: Option<String>,
}

/// What this kernel offers the sandbox.
#[napi]
pub fn sandbox_support() -> SandboxSupport {
    let s = engram_sandbox::support();
    SandboxSupport { landlock_abi: s.landlock_abi, namespaces: s.namespaces, missing: s.missing }
}

/// Cancels the `sandboxExecute` it was given to (kills the command within 50 ms).
#[napi]
#[derive(Default)]
pub struct SandboxCancel {
    flag: Arc<AtomicBool>,
}

#[napi]
impl SandboxCancel {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    #[napi]
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }
}

pub struct Execute {
    command: String,
    policy: Option<Policy>,
    cancel: Arc<AtomicBool>,
}

impl Task for Execute {
    type Output = Result<Outcome, SandboxError>;
    type JsValue = Either<SandboxOutcome, Failure>;
    fn compute(&mut self) -> napi::Result<Self::Output> {
        let policy = self.policy.take().ok_or_else(|| napi::Error::from_reason("already ran"))?;
        Ok(engram_sandbox::execute(&self.command, &policy, &self.cancel))
    }
    fn resolve(&mut self, _env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(match output {
            Ok(o) => Either::A(SandboxOutcome {
                output: o.output,
                exit_code: o.exit_code,
                signal: o.signal,
                truncated: o.truncated,
                timed_out: o.timed_out,
                cancelled: o.cancelled,
            }),
            Err(e) => Either::B(Failure {
                error: ErrorData { code: e.code().to_string(), message: e.to_string(), subject: None, detail: None },
            }),
        })
    }
}

/// Runs `command` with `/bin/sh -c` confined beneath `options.root`: the outcome, or
/// `{ error }` (`unsupported` where the kernel lacks what the sandbox needs).
#[napi(ts_return_type = "Promise<SandboxOutcome | Failure>")]
pub fn sandbox_execute(command: String, options: SandboxOptions, cancel: &SandboxCancel) -> AsyncTask<Execute> {
    let mut policy = Policy::new(options.root);
    policy.cwd = options.cwd.map(Into::into);
    policy.write_root = !options.read_only.unwrap_or(false);
    policy.unconfined = options.unconfined.unwrap_or(false);
    if let Some(ms) = options.timeout_ms {
        policy.timeout = Duration::from_millis(ms.max(0.0) as u64);
    }
    if let Some(cap) = options.output_cap {
        policy.output_cap = cap as usize;
    }
    policy.env = options
        .env
        .unwrap_or_default()
        .into_iter()
        .filter_map(|pair| pair.split_once('=').map(|(n, v)| (n.to_string(), v.to_string())))
        .collect();
    AsyncTask::new(Execute { command, policy: Some(policy), cancel: cancel.flag.clone() })
}
