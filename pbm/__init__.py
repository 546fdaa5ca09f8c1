"""pbm: a play-by-email server for abstract board games."""

__version__ = "0.1.0"

# The environment variable that names the configuration file (pbm.config); here, so
# that `pbm --help` can name it without loading the configuration's models.
ENV_CONFIG = "PBM_CONFIG"
