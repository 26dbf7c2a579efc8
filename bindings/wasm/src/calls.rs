//! The calls of `engram_abi::calls!` as wasm-bindgen exports: one arm per result kind says how
//! its value crosses (as one JavaScript value, see the crate docs); the table says everything
//! else.

use crate::{split, ErrorData, IntoJs, Text, U32s};
use engram_core::CoreResult;
use wasm_bindgen::prelude::*;

result! {
    /// The text of one tool call; or `error`.
    pub struct TextOut {
        pub text: Option<Text>,
        pub error: Option<ErrorData>,
    }
}

result! {
    /// A text and a count (`text_and_count`).
    pub struct TextAndCount {
        pub text: Text,
        pub count: u32,
    }
}

result! {
    /// A text and numbers about it (`text_and_u32s`).
    pub struct TextAndNumbers {
        pub text: Text,
        pub numbers: U32s,
    }
}

/// A `text_or_error` result.
pub(crate) fn text_out(r: CoreResult<String>) -> TextOut {
    let (text, error) = split(r);
    TextOut { text: text.map(IntoJs::js), error }
}

/// One entry of the table, exported (see `engram_abi::calls!` for the kinds).
macro_rules! export {
    // The class's JavaScript constructor.
    (impl $class:ident { $(#[$($attr:tt)*])* constructor $args:tt { $($body:tt)* } }) => {
        #[wasm_bindgen] impl $class { $(#[$($attr)*])* #[wasm_bindgen(constructor)] pub fn new $args -> $class { $($body)* } }
    };
    // A constructor: the body yields the binding's class.
    ($(#[$($attr:tt)*])* fn $name:ident as $js:tt $args:tt -> new $ret:ident { $($body:tt)* }) => {
        $(#[$($attr)*])* #[wasm_bindgen(js_name = $js)] pub fn $name $args -> $ret { $($body)* }
    };
    (impl $class:ident { $(#[$($attr:tt)*])* fn $name:ident as $js:tt $args:tt -> $kind:ident { $($body:tt)* } }) => {
        $crate::calls::export!(@$kind [$class] [$(#[$($attr)*])*] $name $js $args { $($body)* });
    };
    ($(#[$($attr:tt)*])* fn $name:ident as $js:tt $args:tt -> $kind:ident { $($body:tt)* }) => {
        $crate::calls::export!(@$kind [] [$(#[$($attr)*])*] $name $js $args { $($body)* });
    };
    (@text $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::Text {
                let text: String = { $($body)* };
                $crate::IntoJs::js(text)
            });
    };
    (@count $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)] pub fn $name $args -> u32 { $($body)* });
    };
    (@f64s $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::F64s {
                let values: Vec<f64> = { $($body)* };
                $crate::IntoJs::js(values)
            });
    };
    (@u32s $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::U32s {
                let values: Vec<u32> = { $($body)* };
                $crate::IntoJs::js(values)
            });
    };
    (@text_and_count $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::calls::TextAndCount {
                let (text, count): (String, u32) = { $($body)* };
                $crate::calls::TextAndCount { text: $crate::IntoJs::js(text), count }
            });
    };
    (@text_and_u32s $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::calls::TextAndNumbers {
                let (text, numbers): (String, Vec<u32>) = { $($body)* };
                $crate::calls::TextAndNumbers { text: $crate::IntoJs::js(text), numbers: $crate::IntoJs::js(numbers) }
            });
    };
    (@u32s_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js, unchecked_return_type = "Uint32Array | Failure")]
            pub fn $name $args -> wasm_bindgen::JsValue {
                let values: engram_core::CoreResult<Vec<u32>> = { $($body)* };
                $crate::made(values, wasm_bindgen::JsValue::from)
            });
    };
    (@bytes_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js, unchecked_return_type = "Uint8Array | Failure")]
            pub fn $name $args -> wasm_bindgen::JsValue {
                let bytes: engram_core::CoreResult<Vec<u8>> = { $($body)* };
                $crate::made(bytes, wasm_bindgen::JsValue::from)
            });
    };
    (@error $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::ErrorData { $crate::error_data_of({ $($body)* }) });
    };
    (@error_or_none $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> Option<$crate::ErrorData> {
                let error: Option<engram_core::CoreError> = { $($body)* };
                error.map($crate::error_data_of)
            });
    };
    (@merged $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::Merged { $crate::merged({ $($body)* }) });
    };
    (@count_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js, unchecked_return_type = "number | Failure")]
            pub fn $name $args -> wasm_bindgen::JsValue {
                let count: engram_core::CoreResult<u32> = { $($body)* };
                $crate::made(count, wasm_bindgen::JsValue::from)
            });
    };
    (@bytes $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::Bytes {
                let bytes: Vec<u8> = { $($body)* };
                $crate::IntoJs::js(bytes)
            });
    };
    (@bytes_or_none $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> Option<$crate::Bytes> {
                let bytes: Option<Vec<u8>> = { $($body)* };
                bytes.map($crate::IntoJs::js)
            });
    };
    (@entries $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::Entries { $crate::Entries::of({ $($body)* }) });
    };
    (@file_columns $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::GlobOut { $crate::GlobOut::of({ $($body)* }) });
    };
    (@grep_columns $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::GrepOut { $crate::grep_out({ $($body)* }) });
    };
    (@text_meta $class:tt [$($attr:tt)*] $name:ident $js:tt (& mut $self:tt, $($arg:tt)*) { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name(&mut $self, $($arg)*, meta: &mut [f64]) -> Option<$crate::Text> {
                let result = { $($body)* };
                $self.keep(result, |(text, values)| {
                    $crate::fill(meta, &values);
                    $crate::IntoJs::js(text)
                })
            });
    };
    (@text_meta $class:tt [$($attr:tt)*] $name:ident $js:tt (& $self:tt, $($arg:tt)*) { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name(&$self, $($arg)*, meta: &mut [f64]) -> Option<$crate::Text> {
                let result = { $($body)* };
                $self.keep(result, |(text, values)| {
                    $crate::fill(meta, &values);
                    $crate::IntoJs::js(text)
                })
            });
    };
    (@texts $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::Texts {
                let texts: Vec<String> = { $($body)* };
                $crate::IntoJs::js(texts)
            });
    };
    (@glob_asks $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::GlobAsks { $crate::GlobAsks::of({ $($body)* }) });
    };
    (@fan_asks $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::FanAsks { $crate::FanAsks::of({ $($body)* }) });
    };
    (@fan_glob $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::FanGlob { $crate::FanGlob::of({ $($body)* }) });
    };
    (@route $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::RouteOut { $crate::RouteOut::of({ $($body)* }) });
    };
    (@text_meta_or_none $class:tt [$($attr:tt)*] $name:ident $js:tt ($($arg:tt)*) { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name($($arg)*, meta: &mut [f64]) -> Option<$crate::Text> {
                let result: Option<(String, _)> = { $($body)* };
                let (text, values) = result?;
                $crate::fill(meta, &values);
                Some($crate::IntoJs::js(text))
            });
    };
    (@router_or_failure $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js, unchecked_return_type = "Router | Failure")]
            pub fn $name $args -> wasm_bindgen::JsValue {
                let router: engram_core::CoreResult<$crate::Router> = { $($body)* };
                $crate::made(router, wasm_bindgen::JsValue::from)
            });
    };
    (@text_or_error $class:tt [$($attr:tt)*] $name:ident $js:tt $args:tt { $($body:tt)* }) => {
        $crate::calls::shim!($class $($attr)* #[wasm_bindgen(js_name = $js)]
            pub fn $name $args -> $crate::calls::TextOut { $crate::calls::text_out({ $($body)* }) });
    };
}

/// A function, or a method in an `impl` block of its own.
macro_rules! shim {
    ([] $($item:tt)*) => { $($item)* };
    ([$class:ident] $($item:tt)*) => { #[wasm_bindgen] impl $class { $($item)* } };
}

pub(crate) use {export, shim};
