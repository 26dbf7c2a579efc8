//! What a fan-out over resident tables asks each source, and the answers it collects.
//!
//! When every backend a composite grep or glob reaches keeps its files in a core file table (a
//! StateBackend's table, a StoreBackend's synced mirror), the composite asks each table here, as
//! it would ask the backend (same pattern, directory and options), and merges once: no answer
//! crosses the boundary per mount, and the tool text is made from the merge directly.

use super::errors::malformed;
use crate::error::CoreResult;

/// One source a fan-out asks: the default backend (`mount` = `None`) or a route, with the
/// directory (inner to the source), pattern and cap it is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FanAsk {
    pub mount: Option<usize>,
    pub path: String,
    /// glob: the pattern; grep: the file-name `glob` option the source applies itself.
    pub pattern: Option<String>,
    /// grep: the `maxCount` the source is asked with (`None`: none; see [`GrepFanOut::new`](super::GrepFanOut::new));
    /// glob: unused (`None`).
    pub max_count: Option<usize>,
}

/// A slot's answer: not yet given, skipped (a missing directory that holds no matches), or given.
pub(super) enum Slot<T> {
    Empty,
    Skipped,
    Given(T),
}

pub(super) fn take_parts<T>(slots: Vec<Slot<T>>) -> CoreResult<Vec<T>> {
    let mut out = Vec::with_capacity(slots.len());
    for s in slots {
        match s {
            Slot::Empty => return Err(malformed("fan-out (a source was not given)")),
            Slot::Skipped => {}
            Slot::Given(t) => out.push(t),
        }
    }
    Ok(out)
}

pub(super) fn slot_of(asks: &[FanAsk], mount: Option<usize>) -> CoreResult<usize> {
    asks.iter().position(|a| a.mount == mount).ok_or_else(|| malformed("fan-out (that source is not asked)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::composite::{GlobFanOut, GrepFanOut};
    use crate::error::ErrorCode;
    use crate::grep::GrepOptions;
    use crate::router::Router;
    use crate::table::FileTable;

    #[test]
    fn fan_out_errors_name_the_outer_path_and_need_every_source() {
        let router = Router::new(&["/m/"]).unwrap();
        let (own, mount) = (FileTable::new(), FileTable::new());
        let opts = GrepOptions { pattern: "x".into(), ..GrepOptions::default() };
        let mut fan = GrepFanOut::new(&router, &opts, "/m/missing");
        assert_eq!(fan.asks(), [FanAsk { mount: Some(0), path: "/missing".into(), pattern: None, max_count: None }]);
        let e = fan.add(&router, Some(0), &mount).unwrap_err();
        assert_eq!((e.code, e.subject.as_str()), (ErrorCode::FileNotFound, "/m/missing"));
        // A source not given is a malformed call, not an empty answer.
        let mut fan = GrepFanOut::new(&router, &opts, "/");
        fan.add(&router, None, &own).unwrap();
        assert_eq!(fan.finish(&router).unwrap_err().code, ErrorCode::Unsupported);
        let mut fan = GlobFanOut::new(&router, "*", "/", None);
        assert_eq!(fan.add(&router, Some(3), &own).unwrap_err().code, ErrorCode::Unsupported);
        // A fan-out made for its text alone answers the text and refuses the structured answer,
        // which may be missing what its sources left unsearched.
        let text_only = || {
            let mut fan = GrepFanOut::new(&router, &opts, "/").for_text(Some(10));
            fan.add(&router, None, &own).unwrap();
            fan.add(&router, Some(0), &mount).unwrap();
            fan
        };
        assert_eq!(text_only().finish(&router).unwrap_err().code, ErrorCode::Unsupported);
        assert!(text_only().text(&router, 10).is_ok());
    }
}
