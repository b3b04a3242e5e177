"""The validated model of an operator, its product views, the static typer and evaluator (imports core, lang)."""
