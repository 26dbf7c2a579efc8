//! `RootedFs`: the N-API face of `engram-fs` (native only). Searches run on the libuv thread
//! pool so a large grep does not block the event loop.

use engram_fs::api;
use napi::bindgen_prelude::{AsyncTask, Buffer, Either, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;
use std::sync::Arc;

/// Real files under one host directory, with containment on the real path.
#[napi]
pub struct RootedFs {
    inner: Arc<engram_fs::RootedFs>,
}

#[napi]
impl RootedFs {
    /// `optionsJson` is `{ root, maxFileBytes, respectGitignore }`; failure throws the JSON error text.
    #[napi(factory)]
    pub fn open(options_json: String) -> napi::Result<Self> {
        api::open(&options_json).map(|fs| RootedFs { inner: Arc::new(fs) }).map_err(napi::Error::from_reason)
    }

    /// The canonical host directory behind `/`.
    #[napi]
    pub fn root(&self) -> String {
        self.inner.root().to_string_lossy().into_owned()
    }

    #[napi]
    pub fn ls(&self, path: String) -> String {
        api::ls(&self.inner, &path)
    }

    #[napi]
    pub fn stat(&self, path: String) -> String {
        api::stat(&self.inner, &path)
    }

    #[napi]
    pub fn read(&self, path: String, offset: u32, limit: Option<u32>) -> String {
        api::read(&self.inner, &path, offset as usize, limit.map(|l| l as usize))
    }

    /// The bytes, or the JSON error text.
    #[napi]
    pub fn read_bytes(&self, path: String) -> Either<Buffer, String> {
        match api::read_bytes(&self.inner, &path) {
            Ok(bytes) => Either::A(Buffer::from(bytes)),
            Err(e) => Either::B(e),
        }
    }

    #[napi]
    pub fn write(&self, path: String, data: Uint8Array, if_version: Option<String>) -> String {
        api::write(&self.inner, &path, &data, if_version.as_deref())
    }

    #[napi]
    pub fn edit(&self, options_json: String) -> String {
        api::edit(&self.inner, &options_json)
    }

    #[napi]
    pub fn delete(&self, path: String) -> String {
        api::delete(&self.inner, &path)
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn grep(&self, options_json: String) -> AsyncTask<Search> {
        AsyncTask::new(Search { fs: self.inner.clone(), options: options_json, run: api::grep })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn glob(&self, options_json: String) -> AsyncTask<Search> {
        AsyncTask::new(Search { fs: self.inner.clone(), options: options_json, run: api::glob })
    }
}

/// A grep or glob off the JavaScript thread.
pub struct Search {
    fs: Arc<engram_fs::RootedFs>,
    options: String,
    run: fn(&engram_fs::RootedFs, &str) -> String,
}

impl Task for Search {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        Ok((self.run)(&self.fs, &self.options))
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}
