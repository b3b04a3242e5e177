"""Hand-written loop oracles that tests compare the vectorised runtime against."""
