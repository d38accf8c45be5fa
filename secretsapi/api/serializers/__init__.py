"""Request and response shapes: types, required fields and bounds only (no domain rules).

Every class has a unique name: drf-spectacular names schema components after them.
"""
