// Placeholder until the UV layer lands.
