//! JavaScript text as UTF-8, converted once.
//!
//! V8's own UTF-8 writer (`napi_get_value_string_utf8`, napi-rs's `String`) runs at about
//! 1 GB/s and needs the length first or a worst-case buffer trimmed afterwards; seeding
//! thousands of files showed it. Here a string's UTF-16 units are copied out (a plain copy for
//! V8) into a scratch buffer this thread reuses, so they stay in cache, and `simdutf` converts
//! them, validating as it goes: a single text into scratch room and then into a buffer of its
//! exact size (a text over [`UNITS_KEPT`] units is measured first and converted straight into
//! its buffer), the texts of a batch straight into the large buffers their files share (see
//! [`Batch`]). Text with lone surrogates (not well-formed UTF-16, which `simdutf` refuses)
//! goes through `encoding_rs`, which makes each U+FFFD, as `String` does.

use crate::buffers;
use engram_core::{api, Bytes};
use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue, ValueType};
use napi::{check_status, sys, Error, Status};
use std::ptr;

/// A JavaScript string as UTF-8 bytes, in a buffer of its exact size.
pub struct Utf8(pub Vec<u8>);

impl TypeName for Utf8 {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for Utf8 {}

impl FromNapiValue for Utf8 {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: forwarded from napi-rs: a live env and a value of this call.
        unsafe {
            with_units(env, value, |units| {
                if units.len() <= UNITS_KEPT {
                    // One validating pass into this thread's scratch, then one exact copy: for
                    // text of this size, cheaper than measuring it first.
                    return Ok(Utf8(BYTES.with_borrow_mut(|bytes| {
                        bytes.clear();
                        bytes.reserve(units.len() * 3);
                        encode(units, Utf8Size { room: units.len() * 3, exact: false }, bytes);
                        bytes.to_vec()
                    })));
                }
                let size = Utf8Size::of(units);
                let mut bytes = Vec::with_capacity(size.room);
                encode(units, size, &mut bytes);
                if !size.exact {
                    bytes.shrink_to_fit();
                }
                Ok(Utf8(bytes))
            })
        }
    }
}

/// The contents of a batch (`writeMany`), every string or `Uint8Array` of a JavaScript array,
/// each a slice of a few large buffers rather than a buffer of its own.
///
/// The buffers are filled in place and never reallocated: a content that does not fit in what
/// is left of the current one starts the next. (Growing one buffer instead moved everything
/// written so far into fresh memory, and faulting in fresh pages was most of a 10,000-file
/// load.)
pub struct Batch {
    pub files: Vec<Bytes>,
}

impl Batch {
    /// Reads `array`; `room` is how many bytes to make room for at first (the caller's
    /// estimate of the total: one per UTF-16 unit, exact for ASCII text).
    ///
    /// # Safety
    /// `env` and `array` must be live handles of the current N-API call.
    pub unsafe fn read(env: sys::napi_env, array: sys::napi_value, room: usize) -> napi::Result<Batch> {
        let mut count = 0;
        // SAFETY: napi checks the value is an array.
        check_status!(unsafe { sys::napi_get_array_length(env, array, &mut count) }, "contents must be an array")?;
        let mut fill =
            Filling { done: Vec::new(), current: Vec::new(), spans: Vec::with_capacity(count as usize), room };
        for i in 0..count {
            let mut item = ptr::null_mut();
            // SAFETY: `i` is below the array's length; `item` is then a live handle of this call.
            check_status!(unsafe { sys::napi_get_element(env, array, i, &mut item) })?;
            unsafe { fill.push(env, item) }
                .map_err(|e| Error::new(e.status, format!("contents[{i}]: {}", e.reason)))?;
        }
        Ok(fill.finish())
    }
}

/// A batch being read: the buffers filled so far, the one being filled, and where each
/// content lies (buffer, start, end).
struct Filling {
    done: Vec<Bytes>,
    current: Vec<u8>,
    spans: Vec<(usize, usize, usize)>,
    /// The bytes the caller's estimate still leaves for the contents to come.
    room: usize,
}

impl Filling {
    /// Appends one content, a string (as UTF-8) or a `Uint8Array` (as it is).
    ///
    /// # Safety
    /// `env` and `value` must be live handles of the current N-API call.
    unsafe fn push(&mut self, env: sys::napi_env, value: sys::napi_value) -> napi::Result<()> {
        let mut kind = 0;
        // SAFETY: a type query on a live value.
        check_status!(unsafe { sys::napi_typeof(env, value, &mut kind) })?;
        if kind == sys::ValueType::napi_string {
            // SAFETY: as this function's.
            return unsafe {
                with_units(env, value, |units| {
                    // Room for the worst case, so that one pass converts and validates (the
                    // buffers are large: that room is nearly always there already).
                    self.make_room(units.len() * 3);
                    let start = self.current.len();
                    encode(units, Utf8Size { room: units.len() * 3, exact: false }, &mut self.current);
                    self.spans.push((self.done.len(), start, self.current.len()));
                    Ok(())
                })
            };
        }
        let mut is_typed = false;
        // SAFETY: a type query on a live value.
        check_status!(unsafe { sys::napi_is_typedarray(env, value, &mut is_typed) })?;
        if is_typed {
            let (mut typed, mut length, mut data) = (0, 0, ptr::null_mut());
            // SAFETY: `value` is a typed array; napi answers its element type, length and data.
            check_status!(unsafe {
                sys::napi_get_typedarray_info(
                    env,
                    value,
                    &mut typed,
                    &mut length,
                    &mut data,
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            })?;
            if typed == sys::TypedarrayType::uint8_array {
                self.make_room(length);
                let start = self.current.len();
                if length > 0 {
                    // SAFETY: a Uint8Array's `length` bytes start at `data` (non-null when not empty).
                    self.current.extend_from_slice(unsafe { std::slice::from_raw_parts(data as *const u8, length) });
                }
                self.spans.push((self.done.len(), start, self.current.len()));
                return Ok(());
            }
        }
        Err(Error::new(Status::InvalidArg, "must be a string or a Uint8Array".to_string()))
    }

    /// Makes sure the current buffer has `need` bytes to spare, starting the next one if not.
    fn make_room(&mut self, need: usize) {
        if self.current.capacity() - self.current.len() >= need {
            return;
        }
        let full = std::mem::take(&mut self.current);
        if full.capacity() > 0 {
            self.room = self.room.saturating_sub(full.len());
            let used = full.len();
            self.done.push(buffers::share(api::batch_buffer(full, used)));
        }
        // The estimate may be more than memory can give (it comes from the caller): then only
        // what is needed now.
        self.current =
            buffers::take(need.max(self.room).max(buffers::LARGE)).unwrap_or_else(|| Vec::with_capacity(need));
    }

    fn finish(mut self) -> Batch {
        let used = self.current.len();
        self.done.push(buffers::share(api::batch_buffer(self.current, used)));
        let buffers = self.done;
        Batch { files: self.spans.into_iter().map(|(b, start, end)| buffers[b].slice(start..end)).collect() }
    }
}

thread_local! {
    /// The scratch UTF-16 units of [`with_units`].
    static UNITS: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The scratch UTF-8 of a [`Utf8`] of up to [`UNITS_KEPT`] units.
    static BYTES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The most UTF-16 units the scratch of [`with_units`] keeps room for between conversions
/// (256 Ki units: 512 KiB, and 768 KiB of UTF-8 scratch); a longer text's room is released
/// after it.
const UNITS_KEPT: usize = 256 * 1024;

/// Calls `then` with a string's UTF-16 units, copied out of V8 into this thread's scratch.
///
/// # Safety
/// `env` and `value` must be live handles of the current N-API call.
unsafe fn with_units<T>(
    env: sys::napi_env,
    value: sys::napi_value,
    then: impl FnOnce(&[u16]) -> napi::Result<T>,
) -> napi::Result<T> {
    let mut count = 0;
    // SAFETY: a length query (null buffer) on a value napi checks to be a string.
    check_status!(unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut count) })?;
    UNITS.with_borrow_mut(|units| {
        units.clear();
        units.reserve(count + 1);
        let mut copied = 0;
        // SAFETY: `units` has room for `count + 1` units, which napi writes at most (the last
        // is the NUL it appends); `copied` of them are then initialised.
        check_status!(unsafe {
            sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), count + 1, &mut copied)
        })?;
        unsafe { units.set_len(copied) };
        let answer = then(units);
        if units.capacity() > UNITS_KEPT {
            *units = Vec::new();
        }
        answer
    })
}

/// The room the UTF-8 of some UTF-16 units takes.
#[derive(Clone, Copy)]
struct Utf8Size {
    /// Exact for well-formed UTF-16; for text with lone surrogates, the most it can take
    /// (three bytes per unit).
    room: usize,
    /// Whether the units are well-formed (and `room` exact).
    exact: bool,
}

impl Utf8Size {
    fn of(units: &[u16]) -> Utf8Size {
        if simdutf::validate_utf16(units) {
            Utf8Size { room: simdutf::utf8_length_from_utf16(units), exact: true }
        } else {
            Utf8Size { room: units.len() * 3, exact: false }
        }
    }
}

/// Appends `units` as UTF-8 (a lone surrogate as U+FFFD) to `out`, which has `size.room` bytes
/// to spare. Units not known to be well-formed are validated while they are converted.
fn encode(units: &[u16], size: Utf8Size, out: &mut Vec<u8>) {
    let start = out.len();
    assert!(out.capacity() - start >= size.room, "room for the UTF-8 of the text");
    let to = out.as_mut_ptr().wrapping_add(start);
    // SAFETY: UTF-8 takes at most three bytes per UTF-16 unit, and exactly `size.room` when it
    // is exact (well-formed, validated); `out` has that room spare. The validating conversion
    // writes within it and answers 0 for units that are not well-formed. What is reported
    // written is then initialised.
    let written = unsafe {
        if size.exact {
            simdutf::convert_valid_utf16_to_utf8(units.as_ptr(), units.len(), to)
        } else {
            simdutf::convert_utf16_to_utf8(units.as_ptr(), units.len(), to)
        }
    };
    if written > 0 || units.is_empty() {
        unsafe { out.set_len(start + written.min(size.room)) };
        return;
    }
    out.resize(start + units.len() * 3, 0);
    let written = encoding_rs::mem::convert_utf16_to_utf8(units, &mut out[start..]);
    out.truncate(start + written);
}
