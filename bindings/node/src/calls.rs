//! The calls of `engram_abi::calls!` as N-API exports: one arm per result kind says how its
//! value crosses; the table says everything else.

use crate::column::Column;
use crate::{failure, Failure};
use engram_core::CoreResult;
use napi::bindgen_prelude::Either;
use napi_derive::napi;

/// The text of one tool call.
#[napi(object)]
pub struct TextOut {
    pub text: String,
}

/// A text and a count (`text_and_count`).
#[napi(object, object_from_js = false)]
pub struct TextAndCount {
    pub text: String,
    pub count: u32,
}

/// A text and numbers about it (`text_and_u32s`).
#[napi(object, object_from_js = false)]
pub struct TextAndNumbers {
    pub text: String,
    #[napi(ts_type = "Uint32Array")]
    pub numbers: Column<u32>,
}

/// A `text_or_error` result: `{ text }` or `{ error }`.
pub(crate) fn text_out(r: CoreResult<String>) -> Either<TextOut, Failure> {
    match r {
        Ok(text) => Either::A(TextOut { text }),
        Err(e) => Either::B(failure(e)),
    }
}

/// One entry of the table, exported (see `engram_abi::calls!` for the kinds).
macro_rules! export {
    // A file table method that may change the content: V8 is told the table's memory after it.
    (impl FileTable { $(#[$($attr:tt)*])* fn $name:ident as $js:tt (& mut $self:tt, $($arg:tt)*) -> $kind:ident { $($body:tt)* } }) => {
        $crate::calls::export!(@$kind [FileTable] [$(#[$($attr)*])*] $name $js (&mut $self, env: napi::bindgen_prelude::Env, $($arg)*) {
            let result = { $($body)* };
            $self.account(&env);
            result
        });
    };
    // The class's JavaScript constructor.
    (impl $class:ident { $(#[$($attr:tt)*])* constructor $args:tt { $($body:tt)* } }) => {
        #[napi] impl $class { $(#[$($attr)*])* #[napi(constructor)] pub fn new $args -> $class { $($body)* } }
    };
    // A constructor: the body yields the binding's class.
    ($(#[$($attr:tt)*])* fn $name:ident as $js:tt $args:tt -> new $ret:ident { $($body:tt)* }) => {
        $(#[$($attr)*])* #[napi(js_name = $js)] pub fn $name $args -> $ret { $($body)* }
    };
    (impl $class:ident { $(#[$($attr:tt)*])* fn $name:ident as $js:tt $args:tt -> $kind:ident { $($body:tt)* } }) => {
        $crate::calls::export!(@$kind [$class] [$(#[$($attr)*])*] $name $js $args { $($body)* });
    };
    ($(#[$($attr:tt)*])* fn $name:ident as $js:tt $args:tt -> $kind:ident { $($body:tt)* }) => {
        $crate::calls::export!(@$kind [] [$(#[$($attr)*])*] $name $js $args { $($body)* });
    };
    (@text $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)] pub fn $name $args -> String { $($body)* });
    };
    (@count $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)] pub fn $name $args -> u32 { $($body)* });
    };
    (@f64s $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js, ts_return_type = "Float64Array")]
            pub fn $name $args -> $crate::column::Column<f64> { $crate::column::Column({ $($body)* }) });
    };
    (@u32s $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js, ts_return_type = "Uint32Array")]
            pub fn $name $args -> $crate::column::Column<u32> { $crate::column::Column({ $($body)* }) });
    };
    (@text_and_count $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> $crate::calls::TextAndCount {
                let (text, count): (String, u32) = { $($body)* };
                $crate::calls::TextAndCount { text, count }
            });
    };
    (@text_and_u32s $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> $crate::calls::TextAndNumbers {
                let (text, numbers): (String, Vec<u32>) = { $($body)* };
                $crate::calls::TextAndNumbers { text, numbers: $crate::column::Column(numbers) }
            });
    };
    (@u32s_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js, ts_return_type = "Uint32Array | Failure")]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::column::Column<u32>, $crate::Failure> {
                $crate::out({ $($body)* }, $crate::column::Column)
            });
    };
    (@bytes_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<napi::bindgen_prelude::Buffer, $crate::Failure> {
                $crate::out({ $($body)* }, napi::bindgen_prelude::Buffer::from)
            });
    };
    (@error $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> $crate::ErrorData { $crate::failure({ $($body)* }).error });
    };
    (@error_or_none $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> Option<$crate::ErrorData> {
                let error: Option<engram_core::CoreError> = { $($body)* };
                error.map(|e| $crate::failure(e).error)
            });
    };
    (@merged $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::composite::Merged, $crate::Failure> {
                $crate::out({ $($body)* }, $crate::composite::Merged::of)
            });
    };
    (@count_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<u32, $crate::Failure> {
                $crate::out({ $($body)* }, |n: u32| n)
            });
    };
    (@bytes $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Buffer {
                let bytes: Vec<u8> = { $($body)* };
                bytes.into()
            });
    };
    (@bytes_or_none $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> Option<napi::bindgen_prelude::Buffer> {
                let bytes: Option<Vec<u8>> = { $($body)* };
                bytes.map(napi::bindgen_prelude::Buffer::from)
            });
    };
    (@entries $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::Entries, $crate::Failure> {
                $crate::out({ $($body)* }, $crate::Entries::of)
            });
    };
    (@file_columns $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::GlobOut, $crate::Failure> {
                $crate::out({ $($body)* }, $crate::GlobOut::of)
            });
    };
    (@grep_columns $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::GrepOut, $crate::Failure> {
                $crate::out({ $($body)* }, $crate::grep_out)
            });
    };
    (@text_meta $class:tt [$($attr:tt)*] $name:ident $js:tt (& mut $self:tt, $($arg:tt)*) { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name(&mut $self, $($arg)*, meta: napi::bindgen_prelude::Float64ArraySlice) -> Option<String> {
                let result = { $($body)* };
                $self.keep(result, |(text, values)| {
                    $crate::fill(meta, &values);
                    text
                })
            });
    };
    (@text_meta $class:tt [$($attr:tt)*] $name:ident $js:tt (& $self:tt, $($arg:tt)*) { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name(&$self, $($arg)*, meta: napi::bindgen_prelude::Float64ArraySlice) -> Option<String> {
                let result = { $($body)* };
                $self.keep(result, |(text, values)| {
                    $crate::fill(meta, &values);
                    text
                })
            });
    };
    (@texts $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)] pub fn $name $args -> Vec<String> { $($body)* });
    };
    (@glob_asks $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> $crate::composite::GlobAsks { $crate::composite::GlobAsks::of({ $($body)* }) });
    };
    (@fan_asks $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> $crate::composite::FanAsks { $crate::composite::FanAsks::of({ $($body)* }) });
    };
    (@fan_glob $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::composite::FanGlob, $crate::Failure> {
                $crate::out({ $($body)* }, $crate::composite::FanGlob::of)
            });
    };
    (@route $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::RouteOut, $crate::Failure> {
                $crate::out({ $($body)* }, $crate::RouteOut::of)
            });
    };
    (@text_meta_or_none $class:tt [$($attr:tt)*] $name:ident $js:tt ($($arg:tt)*) { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name($($arg)*, meta: napi::bindgen_prelude::Float64ArraySlice) -> Option<String> {
                let result: Option<(String, _)> = { $($body)* };
                let (text, values) = result?;
                $crate::fill(meta, &values);
                Some(text)
            });
    };
    (@router_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::Router, $crate::Failure> {
                $crate::out({ $($body)* }, |router: $crate::Router| router)
            });
    };
    (@text_or_error $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[napi(js_name = $js)]
            pub fn $name $args -> napi::bindgen_prelude::Either<$crate::calls::TextOut, $crate::Failure> {
                $crate::calls::text_out({ $($body)* })
            });
    };
}

/// A function, or a method in an `impl` block of its own.
macro_rules! shim {
    ([] $($item:tt)*) => { $($item)* };
    ([$class:ident] $($item:tt)*) => { #[napi] impl $class { $($item)* } };
}

pub(crate) use {export, shim};
