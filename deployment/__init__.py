"""What running the service on servers needs beyond the API: its private files made at start, one
secret key per database (checked at start), and backups that restore."""
