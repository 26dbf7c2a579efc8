//! Number columns returned as typed arrays in memory V8 owns.
//!
//! napi-rs's `Float64Array::new(vec)` lends the vector to V8 as an external buffer, freed by a
//! finalizer that Node runs only when the event loop turns. Calls made within one turn (a loop
//! of globs, a server answering in a burst) kept every result's columns alive, so each call
//! wrote its results into fresh pages: a 5,000-file glob faulted 30 pages, and 5,000 globs in a
//! turn held 600 MB more. A [`Column`] is copied into an `ArrayBuffer` V8 allocates, which its
//! collector frees like any other value; the vector goes back to the allocator at once.

use napi::bindgen_prelude::{ToNapiValue, TypeName, ValueType};
use napi::{check_status, sys};
use std::ptr;

/// Numbers that cross as a typed array of their type (`Float64Array`, `Uint32Array`,
/// `Int32Array`, `Uint8Array`), in V8's memory.
pub struct Column<T>(pub Vec<T>);

/// A number type with a typed array of its own.
pub trait Element: Copy {
    const KIND: sys::napi_typedarray_type;
    const NAME: &'static str;
}

impl Element for f64 {
    const KIND: sys::napi_typedarray_type = sys::TypedarrayType::float64_array;
    const NAME: &'static str = "Float64Array";
}

impl Element for u32 {
    const KIND: sys::napi_typedarray_type = sys::TypedarrayType::uint32_array;
    const NAME: &'static str = "Uint32Array";
}

impl Element for i32 {
    const KIND: sys::napi_typedarray_type = sys::TypedarrayType::int32_array;
    const NAME: &'static str = "Int32Array";
}

impl Element for u8 {
    const KIND: sys::napi_typedarray_type = sys::TypedarrayType::uint8_array;
    const NAME: &'static str = "Uint8Array";
}

impl<T: Element> From<Vec<T>> for Column<T> {
    fn from(values: Vec<T>) -> Self {
        Column(values)
    }
}

impl<T: Element> FromIterator<T> for Column<T> {
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        Column(values.into_iter().collect())
    }
}

impl<T: Element> TypeName for Column<T> {
    fn type_name() -> &'static str {
        T::NAME
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl<T: Element> ToNapiValue for Column<T> {
    unsafe fn to_napi_value(env: sys::napi_env, column: Self) -> napi::Result<sys::napi_value> {
        let bytes = std::mem::size_of_val(column.0.as_slice());
        let (mut data, mut buffer, mut array) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        // SAFETY: `env` is the live env napi-rs passes in; napi allocates `bytes` bytes at
        // `data`, which are copied from the vector's initialised elements (plain numbers, so
        // their bytes are their value), and the typed array views all of them.
        unsafe {
            check_status!(sys::napi_create_arraybuffer(env, bytes, &mut data, &mut buffer))?;
            if bytes > 0 {
                ptr::copy_nonoverlapping(column.0.as_ptr().cast::<u8>(), data.cast::<u8>(), bytes);
            }
            check_status!(sys::napi_create_typedarray(env, T::KIND, column.0.len(), buffer, 0, &mut array))?;
        }
        Ok(array)
    }
}
