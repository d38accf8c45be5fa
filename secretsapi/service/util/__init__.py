"""Small framework-free helpers: hashing, atomic file writes, a last-result memo."""
