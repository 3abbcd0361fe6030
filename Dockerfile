# GELU Explorer, self-hosted: the same app and config as on Streamlit Community Cloud.
#   docker build -t gelu-explorer .
#   docker run --rm -p 8501:8501 gelu-explorer      # then open http://localhost:8501
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# torch==2.13.0 from PyPI is the CPU build on Linux x86_64 only with the CPU index; pip would otherwise
# pull the CUDA wheels (several GB).  requirements.txt keeps the pins; the index only chooses the build.
COPY requirements.txt .
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt

# The app runs as a user without a home to write to or a shell to log in with.
RUN useradd --system --no-create-home --shell /usr/sbin/nologin gelu
COPY --chown=root:root app.py ./
COPY --chown=root:root assets/ ./assets/
COPY --chown=root:root draw/ ./draw/
COPY --chown=root:root .streamlit/ ./.streamlit/
COPY --chown=root:root gelu_core/ ./gelu_core/
COPY --chown=root:root hosting/ ./hosting/
COPY --chown=root:root locales/ ./locales/
COPY --chown=root:root pages/ ./pages/
COPY --chown=root:root ui/ ./ui/
USER gelu

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501"]
