"""Named, scoped API keys: database rows holding only a hash of each key's secret part."""
