// Placeholder until the Views layer lands.
