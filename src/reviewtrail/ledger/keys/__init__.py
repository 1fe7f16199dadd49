"""The keys and what they sign (pure, no ledger): Ed25519 keys and their ids, the writer's key file
and the trusted public keys a reader holds, the message a writer's key signs for each record, and
the writer keys the chain declares with the rule each record's signature is held to."""
