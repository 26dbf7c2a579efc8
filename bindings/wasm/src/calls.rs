//! The calls of `engram_abi::calls!` as wasm-bindgen exports: one arm per result kind says how
//! its value crosses (as one JavaScript value, see the crate docs); the table says everything
//! else.

use crate::{split, ErrorData, IntoJs, Text};
use engram_core::CoreResult;
use wasm_bindgen::prelude::*;

result! {
    /// The text of one tool call; or `error`.
    pub struct TextOut {
        pub text: Option<Text>,
        pub error: Option<ErrorData>,
    }
}

/// A `text_or_error` result.
pub(crate) fn text_out(r: CoreResult<String>) -> TextOut {
    let (text, error) = split(r);
    TextOut { text: text.map(IntoJs::js), error }
}

/// One entry of the table, exported (see `engram_abi::calls!` for the kinds).
macro_rules! export {
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
