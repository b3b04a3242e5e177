"""The op-independent half of generated test suites (imports runtime, sim); never imported by the generator's lower layers."""
