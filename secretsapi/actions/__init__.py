"""The actions: one function per operation, between the interfaces and the engine.

Views, management commands, the CLI and jobs call these (settings in, one engine call, one
audit row out: ``auditing.audited``), never the engine directly, so all behave and audit alike.
Each module holds one kind of operation; callers import the module they use.
"""
