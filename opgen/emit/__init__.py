"""Model -> artefacts: the Jinja renderer, computed plans, one module per artefact, the pipeline."""
