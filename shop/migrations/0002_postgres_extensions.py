from django.contrib.postgres.operations import TrigramExtension, UnaccentExtension
from django.db import migrations


class Migration(migrations.Migration):
    # Accent-insensitive full-text search on Postgres ("cafe" finds "Café"); no-ops elsewhere.
    dependencies = [("shop", "0001_initial")]
    operations = [UnaccentExtension(), TrigramExtension()]
