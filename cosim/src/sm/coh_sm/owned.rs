//! DeNovo ownership held by one SM (docs/stall-inspector.md §10.3): the lines whose
//! registration the L2 acknowledged, kept apart from the L1 tags so a self-invalidation spares
//! them. Fixed capacity, least recently used out (its L2 registration is dropped; project
//! decision).

/// The owned lines of one SM.
pub struct Owned {
    line: Vec<u64>,
    lru: Vec<u64>,
    clock: u64,
}

impl Owned {
    pub fn new(cap: usize) -> Owned {
        Owned {
            line: Vec::with_capacity(cap),
            lru: Vec::with_capacity(cap),
            clock: 0,
        }
    }

    fn find(&self, line: u64) -> Option<usize> {
        self.line.iter().position(|&l| l == line)
    }

    /// Whether `line` is owned (a hit refreshes it).
    pub fn hit(&mut self, line: u64) -> bool {
        match self.find(line) {
            Some(i) => {
                self.clock += 1;
                self.lru[i] = self.clock;
                true
            }
            None => false,
        }
    }

    /// Whether `line` is owned.
    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
    }

    /// Takes ownership of `line`; the line evicted to make room, if any.
    pub fn insert(&mut self, line: u64) -> Option<u64> {
        self.clock += 1;
        if let Some(i) = self.find(line) {
            self.lru[i] = self.clock;
            return None;
        }
        if self.line.len() < self.line.capacity() {
            self.line.push(line);
            self.lru.push(self.clock);
            return None;
        }
        let v = (0..self.line.len()).min_by_key(|&i| self.lru[i])?;
        let old = std::mem::replace(&mut self.line[v], line);
        self.lru[v] = self.clock;
        Some(old)
    }

    /// Gives up `line` (another SM registered it, or an atomic revoked it).
    pub fn remove(&mut self, line: u64) {
        if let Some(i) = self.find(line) {
            self.line.swap_remove(i);
            self.lru.swap_remove(i);
        }
    }

    /// Lines owned.
    pub fn len(&self) -> usize {
        self.line.len()
    }
}
