"""Pages of procurement: terms and what is still to be confirmed (`terms`), costs (`costs`)."""
