# hamisim container image: Debian 12 build, debian:12-slim runtime, non-root, read-only root
# filesystem friendly (nothing is written at run time).
#   docker build -t hamisim:0.1.0 .
#   docker run --rm hamisim:0.1.0 --help

# ---- build ------------------------------------------------------------------------------
FROM debian:12 AS build
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# The same package list as everywhere else (README, CI).
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DHAMISIM_TESTS=OFF -DHAMISIM_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/opt/hamisim \
 && cmake --build /build --target hamisim \
 && cmake --install /build --strip

# ---- runtime ----------------------------------------------------------------------------
FROM debian:12-slim
ENV DEBIAN_FRONTEND=noninteractive
# Only the shared libraries hamisim links: OpenSSL 3, yaml-cpp, spdlog/fmt, Boost.JSON,
# simdjson.
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      ca-certificates libssl3 libyaml-cpp0.7 libspdlog1.10 libfmt9 libboost-json1.81.0 libsimdjson14 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 hamisim \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin hamisim
COPY --from=build /opt/hamisim /opt/hamisim
ENV PATH=/opt/hamisim/bin:$PATH
USER 65532:65532
EXPOSE 8443 9395
ENTRYPOINT ["/opt/hamisim/bin/hamisim"]
CMD ["--help"]
