// Placeholder until the Domain layer lands.
