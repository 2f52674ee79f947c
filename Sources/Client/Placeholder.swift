// Placeholder until the Client layer lands.
