"""Sessions: one per era, behind one interface (request/notify), with explicit overrides."""
