"""The core both subjects stand on: the wire (transports, JSON-RPC, the wire log, redaction), what
each era's wire looks like (wires/), the requirements registry, and the verdict and result model
the reporters read. Nothing here knows which side of the wire is under test."""
