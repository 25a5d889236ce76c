"""Package layout (metadata is in pyproject.toml).

The templates, static sources and locale live in top-level folders of the source tree; a non-editable
install (`pip install .`, the Docker image) must carry them, so they are mapped into the wheel as
package data under `config/_site/`, where `config/settings/base.py` looks first.

Every data folder is named in `packages` too (namespace packages): setuptools otherwise warns, once per folder
and 40 lines each, that a folder Python could import "would be ignored" (~1000 lines on every install).
"""

from setuptools import find_namespace_packages, setup

CODE = ["config*", "kernel*", "shop*", "bcp_app*", "orders*", "payments*", "fiscal*", "carriers*"]

SITE_FOLDERS = {
    "config._site.templates": "templates",
    "config._site.static": "static",
    "config._site.locale": "locale",
}


def site_packages() -> list[str]:
    """Each site folder and every folder under it, as the package name it has in the wheel."""
    names: list[str] = []
    for package, folder in SITE_FOLDERS.items():
        names += [package, *(f"{package}.{sub}" for sub in find_namespace_packages(where=folder))]
    return names


setup(
    packages=[*find_namespace_packages(include=CODE, exclude=["*.__pycache__"]), *site_packages()],
    package_dir=SITE_FOLDERS,
    package_data={
        **{name: ["**/*"] for name in SITE_FOLDERS},
        "bcp_app": ["jsonschemas/**/*"],
        "orders": ["locale/**/*"],
        # form widget templates are found through the app (the form renderer does not read TEMPLATES DIRS)
        "shop": ["templates/**/*"],
    },
)
