//! `RootedFs`: the N-API face of `engram-fs` (native only). Every operation runs on the libuv
//! thread pool, so no call blocks the event loop, whatever the input (a huge directory, a deep
//! tree, a slow disk); searches can be cancelled through an [`FsCancel`].

use engram_fs::api;
use napi::bindgen_prelude::{AsyncTask, Buffer, Either, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bytes and their version, or the JSON error text.
type Versioned = Result<(Vec<u8>, String), String>;

/// Real files under one host directory, with handle-based containment.
#[napi]
pub struct RootedFs {
    inner: Arc<engram_fs::RootedFs>,
}

/// A cancellation flag for one search; `cancel()` makes the walk stop at its next entry.
#[napi]
#[derive(Default)]
pub struct FsCancel {
    flag: Arc<AtomicBool>,
}

#[napi]
impl FsCancel {
    #[napi(constructor)]
    pub fn new() -> Self {
        FsCancel::default()
    }

    #[napi]
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }
}

/// A file's bytes and the version of exactly those bytes.
#[napi(object)]
pub struct VersionedBytes {
    pub data: Buffer,
    pub version: String,
}

/// One operation off the JavaScript thread.
pub struct Op<T: Send + 'static> {
    run: Option<Box<dyn FnOnce() -> T + Send>>,
}

fn op<T: Send + 'static>(run: impl FnOnce() -> T + Send + 'static) -> AsyncTask<Op<T>>
where
    Op<T>: Task,
{
    AsyncTask::new(Op { run: Some(Box::new(run)) })
}

impl<T: Send + 'static> Op<T> {
    fn go(&mut self) -> napi::Result<T> {
        self.run.take().map(|f| f()).ok_or_else(|| napi::Error::from_reason("operation already ran"))
    }
}

impl Task for Op<String> {
    type Output = String;
    type JsValue = String;
    fn compute(&mut self) -> napi::Result<String> {
        self.go()
    }
    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

impl Task for Op<Result<Vec<u8>, String>> {
    type Output = Result<Vec<u8>, String>;
    type JsValue = Either<Buffer, String>;
    fn compute(&mut self) -> napi::Result<Self::Output> {
        self.go()
    }
    fn resolve(&mut self, _env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(match output {
            Ok(bytes) => Either::A(Buffer::from(bytes)),
            Err(e) => Either::B(e),
        })
    }
}

impl Task for Op<Result<(Vec<u8>, String), String>> {
    type Output = Result<(Vec<u8>, String), String>;
    type JsValue = Either<VersionedBytes, String>;
    fn compute(&mut self) -> napi::Result<Self::Output> {
        self.go()
    }
    fn resolve(&mut self, _env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(match output {
            Ok((bytes, version)) => Either::A(VersionedBytes { data: Buffer::from(bytes), version }),
            Err(e) => Either::B(e),
        })
    }
}

#[napi]
impl RootedFs {
    /// `optionsJson` is `{ root, maxFileBytes, respectGitignore, maxResults, durability,
    /// lockTimeoutMs }`; failure throws the JSON error text.
    #[napi(factory)]
    pub fn open(options_json: String) -> napi::Result<Self> {
        api::open(&options_json).map(|fs| RootedFs { inner: Arc::new(fs) }).map_err(napi::Error::from_reason)
    }

    /// The canonical host directory behind `/`.
    #[napi]
    pub fn root(&self) -> String {
        self.inner.root().to_string_lossy().into_owned()
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn ls(&self, path: String) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || api::ls(&fs, &path))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn stat(&self, path: String) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || api::stat(&fs, &path))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn read(&self, path: String, offset: u32, limit: Option<u32>) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || api::read(&fs, &path, offset as usize, limit.map(|l| l as usize)))
    }

    /// The bytes, or the JSON error text.
    #[napi(ts_return_type = "Promise<Buffer | string>")]
    pub fn read_bytes(&self, path: String) -> AsyncTask<Op<Result<Vec<u8>, String>>> {
        let fs = self.inner.clone();
        op(move || api::read_bytes(&fs, &path))
    }

    /// The bytes and their version, or the JSON error text.
    #[napi(ts_return_type = "Promise<VersionedBytes | string>")]
    pub fn read_versioned(&self, path: String) -> AsyncTask<Op<Versioned>> {
        let fs = self.inner.clone();
        op(move || api::read_versioned(&fs, &path))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn write(&self, path: String, data: Uint8Array, if_version: Option<String>) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        let data = data.to_vec();
        op(move || api::write(&fs, &path, &data, if_version.as_deref()))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn edit(&self, options_json: String) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || api::edit(&fs, &options_json))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn delete(&self, path: String, if_version: Option<String>) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || api::delete(&fs, &path, if_version.as_deref()))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rename(&self, from: String, to: String, if_version: Option<String>) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || api::rename(&fs, &from, &to, if_version.as_deref()))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn grep(&self, options_json: String, cancel: &FsCancel) -> AsyncTask<Op<String>> {
        let (fs, flag) = (self.inner.clone(), cancel.flag.clone());
        op(move || api::grep(&fs, &options_json, Some(&flag)))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn glob(&self, options_json: String, cancel: &FsCancel) -> AsyncTask<Op<String>> {
        let (fs, flag) = (self.inner.clone(), cancel.flag.clone());
        op(move || api::glob(&fs, &options_json, Some(&flag)))
    }
}
