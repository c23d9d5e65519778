"""Write path: validate and log inputs, then index them asynchronously from the outbox."""
