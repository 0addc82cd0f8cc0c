//! The per-SM write-combining store buffer (docs/stall-inspector.md §10.3; [P §V]): one entry
//! per dirty line, stores to a dirty line combine, flushed when full, on release and at kernel
//! end. A flush sends one entry per cycle to the L2 (GPU: write-through; DeNovo: ownership
//! registration); an entry is free again when the L2 acknowledges it.

const FREE: u8 = 0;
/// Written, not yet part of a flush: further stores combine.
const DIRTY: u8 = 1;
/// Part of a flush, not yet sent.
const QUEUED: u8 = 2;
/// Sent, waiting for the acknowledgement.
const SENT: u8 = 3;

/// The store buffer of one SM.
pub struct StoreBuffer {
    line: Vec<u64>,
    state: Vec<u8>,
}

impl StoreBuffer {
    pub fn new(entries: usize) -> StoreBuffer {
        StoreBuffer {
            line: vec![0; entries],
            state: vec![FREE; entries],
        }
    }

    /// A store to `line`: combined into its dirty entry or given a free one; `false` when
    /// full (the caller starts a flush, [`StoreBuffer::queue_all`]).
    pub fn write(&mut self, line: u64) -> bool {
        if (0..self.line.len()).any(|i| self.state[i] == DIRTY && self.line[i] == line) {
            return true;
        }
        match self.state.iter().position(|&s| s == FREE) {
            Some(i) => {
                self.state[i] = DIRTY;
                self.line[i] = line;
                true
            }
            None => false,
        }
    }

    /// Whether `line` has a store not yet acknowledged (a load of it is served locally).
    pub fn holds(&self, line: u64) -> bool {
        (0..self.line.len()).any(|i| self.state[i] != FREE && self.line[i] == line)
    }

    /// Starts a flush of every dirty entry.
    pub fn queue_all(&mut self) {
        for s in &mut self.state {
            if *s == DIRTY {
                *s = QUEUED;
            }
        }
    }

    /// The next entry to send (the lowest queued one; with `all`, dirty ones too), marked sent:
    /// its index and line.
    pub fn send(&mut self, all: bool) -> Option<(u32, u64)> {
        let i = self
            .state
            .iter()
            .position(|&s| s == QUEUED || (all && s == DIRTY))?;
        self.state[i] = SENT;
        Some((i as u32, self.line[i]))
    }

    /// Entry `i` acknowledged: free; its line.
    pub fn ack(&mut self, i: u32) -> u64 {
        debug_assert_eq!(self.state[i as usize], SENT);
        self.state[i as usize] = FREE;
        self.line[i as usize]
    }

    /// Nothing buffered, queued or in flight.
    pub fn is_empty(&self) -> bool {
        self.state.iter().all(|&s| s == FREE)
    }

    /// Entries in use.
    pub fn used(&self) -> usize {
        self.state.iter().filter(|&&s| s != FREE).count()
    }
}
