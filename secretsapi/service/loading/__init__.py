"""A definition file loaded and checked into the model: the checker sits above the model, the
generators and the target kinds it checks against."""
