"""Package layout (metadata is in pyproject.toml).

The templates, static sources and locale live in top-level folders of the source tree; a non-editable
install (`pip install .`, the Docker image) must carry them, so they are mapped into the wheel as
package data under `shop/_site/`, where `shop/settings/base.py` looks first.
"""

from setuptools import find_packages, setup

SITE_FOLDERS = {
    "shop._site.templates": "templates",
    "shop._site.static": "static",
    "shop._site.locale": "locale",
}

setup(
    packages=[*find_packages(include=["shop*", "bcp_app*", "orders*", "payments*", "fiscal*"]), *SITE_FOLDERS],
    package_dir=SITE_FOLDERS,
    package_data={
        **{name: ["**/*"] for name in SITE_FOLDERS},
        "bcp_app": ["jsonschemas/**/*"],
        "orders": ["locale/**/*"],
        # form widget templates are found through the app (the form renderer does not read TEMPLATES DIRS)
        "shop": ["templates/**/*"],
    },
)
