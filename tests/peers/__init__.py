"""Protocol test peers: small HTTP servers speaking the parts of real APIs our clients call."""
