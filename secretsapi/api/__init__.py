"""HTTP interface: thin DRF views over ``secretsapi.actions``."""
