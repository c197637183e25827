"""The service's languages (docs/i18n.md): the gettext catalogs under ``locale/``, read
with Babel, and the reader's language picked from a request."""
