//! Where each document is in its input, held as the points where numbering jumps.

/// Where a document is in its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The 1-based line of its first line.
    pub line: u64,
    /// The 1-based number of its entry (skipped entries count).
    pub record: u64,
}

/// Where each document is, held as the places where numbering jumps: a document one
/// line and one record after the previous one (the usual case) costs nothing.
#[derive(Default)]
pub(crate) struct Places {
    count: u32,
    /// `(doc, place)` where `doc`'s place is not its predecessor's plus one, ascending.
    jumps: Vec<(u32, Place)>,
}

impl Places {
    pub(crate) fn push(&mut self, place: Place) {
        let doc = self.count;
        if doc == 0
            || self.get(doc - 1).map(|p| (p.line + 1, p.record + 1))
                != Some((place.line, place.record))
        {
            self.jumps.push((doc, place));
        }
        self.count += 1;
    }

    pub(crate) fn get(&self, doc: u32) -> Option<Place> {
        let i = self.jumps.partition_point(|j| j.0 <= doc).checked_sub(1)?;
        let (first, p) = self.jumps[i];
        let k = u64::from(doc - first);
        Some(Place {
            line: p.line + k,
            record: p.record + k,
        })
    }

    #[cfg(test)]
    /// Bytes of heap held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.jumps.capacity() * std::mem::size_of::<(u32, Place)>()
    }
}
