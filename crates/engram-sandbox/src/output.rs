use std::collections::VecDeque;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// stdout and stderr as they were written, interleaved; when over the cap, its first and
    /// last halves around a line that says how many bytes were left out.
    pub output: String,
    /// The exit status, or `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Output was cut.
    pub truncated: bool,
    /// The wall-clock timeout killed it.
    pub timed_out: bool,
    /// A cancel killed it.
    pub cancelled: bool,
}

/// Keeps the first and the last `cap / 2` bytes of a stream, counting what falls between.
pub(crate) struct HeadTail {
    half: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl HeadTail {
    pub(crate) fn new(cap: usize) -> Self {
        let half = cap / 2;
        HeadTail { half, head: Vec::new(), tail: VecDeque::new(), omitted: 0 }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        let room = self.half.saturating_sub(self.head.len());
        let into_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        bytes = &bytes[into_head..];
        if bytes.len() > self.half {
            let skip = bytes.len() - self.half;
            self.omitted += (self.tail.len() + skip) as u64;
            self.tail.clear();
            bytes = &bytes[skip..];
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.half);
        self.tail.drain(..overflow);
        self.omitted += overflow as u64;
        self.tail.extend(bytes);
    }

    pub(crate) fn truncated(&self) -> bool {
        self.omitted > 0
    }

    pub(crate) fn text(self) -> String {
        let mut bytes = self.head;
        if self.omitted > 0 {
            bytes.extend_from_slice(format!("\n[... {} bytes of output omitted ...]\n", self.omitted).as_bytes());
        }
        bytes.extend(self.tail);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_counts_the_rest() {
        let mut h = HeadTail::new(8);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"q"] {
            h.push(chunk);
        }
        assert!(h.truncated());
        assert_eq!(h.text(), "abcd\n[... 9 bytes of output omitted ...]\nnopq");
    }

    #[test]
    fn short_output_is_whole() {
        let mut h = HeadTail::new(100);
        h.push(b"hello\n");
        assert!(!h.truncated());
        assert_eq!(h.text(), "hello\n");
    }
}
