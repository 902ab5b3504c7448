"""Packaging for lapa: everything comes from settings.ini (nbdev 2 layout)."""
from configparser import ConfigParser
from pathlib import Path

import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

requirements = cfg.get('requirements', '').split()
dev_requirements = cfg.get('dev_requirements', '').split()
openpi_requirements = cfg.get('openpi_requirements', '').split()   # openpi's client pins numpy<2: optional
lerobot_requirements = cfg.get('lerobot_requirements', '').split()  # parquet, for data.source=lerobot
lerobot_check_requirements = cfg.get('lerobot_check_requirements', '').split()  # the lerobot library: 15_lerobot's cross-check
# numpy<2 has no wheels for Python 3.13: there the dev extra leaves openpi's client out (its checks are skipped)
openpi_for_dev = [f'{r}; python_version < "3.13"' for r in openpi_requirements]
console_scripts = cfg.get('console_scripts', '').split()
readme = Path('README.md')

setuptools.setup(
    name=cfg['lib_name'],
    version=cfg['version'],
    description=cfg['description'],
    long_description=readme.read_text(encoding='utf-8') if readme.exists() else cfg['description'],
    long_description_content_type='text/markdown',
    author=cfg['author'],
    author_email=cfg['author_email'],
    license='Apache-2.0',
    keywords=cfg['keywords'].split(),
    url=cfg['git_url'],
    project_urls={'Source': cfg['git_url']},
    classifiers=['Programming Language :: Python :: 3', 'Topic :: Scientific/Engineering :: Artificial Intelligence'],
    python_requires='>=' + cfg['min_python'],
    packages=setuptools.find_packages(include=['lapa', 'lapa.*']),
    package_data={'lapa': ['conf/*.yaml', 'conf/**/*.yaml']},
    include_package_data=True,
    install_requires=requirements,
    extras_require={'dev': dev_requirements + openpi_for_dev + lerobot_requirements, 'openpi': openpi_requirements,
                    'lerobot': lerobot_requirements, 'lerobot-check': lerobot_requirements + lerobot_check_requirements},
    entry_points={'console_scripts': console_scripts, 'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    zip_safe=False,
)
