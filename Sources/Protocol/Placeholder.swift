// Placeholder until the Protocol layer lands.
