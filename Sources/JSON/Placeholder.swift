// Placeholder until the JSON layer lands.
