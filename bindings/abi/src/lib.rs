//! The boundary between the core and JavaScript, shared by both bindings (`@engram/native`,
//! napi-rs, and `@engram/wasm`, wasm-bindgen): the table of calls they export ([`calls!`]),
//! declared once, and the conversions only JavaScript needs of the core.

pub use engram_core;

pub mod batch;
mod calls;
pub mod fan;

use engram_core::glob::{Glob, PathFilter};
use engram_core::{path, CoreError, CoreResult, ErrorCode};

/// A count as the `count` kind crosses (a JavaScript number exact to 2^32 - 1; larger is
/// capped, never wrapped).
pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Which of the normalised `paths` a glob admits (their indices, in order), with exactly the
/// matching rules of the table's `glob` and `grep` (used where files live outside a table, e.g.
/// behind a composite route). `kind`: `"glob"` — relative to `root`, or anchored when the
/// pattern starts with `/`; `"grep"` — grep's `glob` option: the file name when the pattern has
/// no `/`, else the path below `root`. Another kind is `unsupported`.
pub fn filter_paths(kind: &str, pattern: &str, root: &str, paths: &[String]) -> CoreResult<Vec<u32>> {
    let root = path::normalize(root)?;
    let admits: Box<dyn Fn(&str) -> bool> = match kind {
        "glob" => {
            let g = Glob::new(pattern, &root)?;
            let root = root.clone();
            Box::new(move |p| g.is_match(p, &root))
        }
        "grep" => {
            let f = PathFilter::new(pattern)?;
            let root = root.clone();
            Box::new(move |p| f.admits(p, &root))
        }
        _ => return Err(CoreError::new(ErrorCode::Unsupported, kind, "filter kind must be \"glob\" or \"grep\"")),
    };
    Ok((0..paths.len()).filter(|&i| admits(&paths[i])).map(|i| i as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_admit_as_glob_and_grep_do() {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(filter_paths("glob", "**/*.md", "/m", &owned(&["/m/a.md", "/x.md", "/m/b/c.md"])), Ok(vec![0, 2]));
        assert_eq!(filter_paths("grep", "*.md", "/", &owned(&["/a/b.md", "/c.txt"])), Ok(vec![0]));
        assert_eq!(filter_paths("glob", "[", "/", &[]).unwrap_err().code, ErrorCode::InvalidPattern);
        assert_eq!(filter_paths("find", "*", "/", &[]).unwrap_err().code, ErrorCode::Unsupported);
        assert_eq!(filter_paths("glob", "*", "/../x", &[]).unwrap_err().code, ErrorCode::PathEscape);
    }

    #[test]
    fn counts_are_capped_not_wrapped() {
        assert_eq!((count(7), count(u32::MAX as usize)), (7, u32::MAX));
        #[cfg(target_pointer_width = "64")]
        assert_eq!(count(1 << 40), u32::MAX);
    }
}
