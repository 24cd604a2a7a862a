"""Project memory (the Vidurai seed): salience and retention, AI-ready context, recent activity,
the active project, and the browser-origin policy of the Vidurai HTTP API."""
