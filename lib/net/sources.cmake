# Network sources: wire codec, transports, simulator, protocol endpoint.
