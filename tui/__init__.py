"""probecast's Textual app. Talks to core only through its public API; never imports TensorFlow."""
