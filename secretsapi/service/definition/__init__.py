"""What a definition file declares: YAML, var files, interpolation, and the model it becomes
(``loading`` checks a file into it)."""
