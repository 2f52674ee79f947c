// Placeholder until the EventLog layer lands.
