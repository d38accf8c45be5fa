"""What a definition file declares: YAML loading, interpolation, checking, and the model it becomes."""
