// Reference data: real universities of Kazakhstan and Russia (official English names, cities, sites, founding years).
// Student counts are rounded, plausible figures, all different so a sort by size is stable.
import type { Insertable } from 'kysely';
import type { UniversitiesTable } from '../schema.ts';
import { universityId } from './reference-ids.ts';

export type UniversitySeed = Omit<Insertable<UniversitiesTable>, 'created_at'> & { id: string; website: string };

type Row = [
  name: string,
  short_name: string,
  city: string,
  student_count: number,
  website: string,
  founded_year: number,
];

/** Kazakhstan: the national credit technology with letter grades and a 4.0 GPA, unless listed below. */
const kz: Row[] = [
  ['Al-Farabi Kazakh National University', 'KazNU', 'Almaty', 25400, 'https://www.kaznu.kz', 1934],
  ['L.N. Gumilyov Eurasian National University', 'ENU', 'Astana', 20300, 'https://enu.kz', 1996],
  ['Nazarbayev University', 'NU', 'Astana', 7100, 'https://nu.edu.kz', 2010],
  ['Kazakh-British Technical University', 'KBTU', 'Almaty', 5200, 'https://kbtu.edu.kz', 2001],
  ['Satbayev University', 'KazNRTU', 'Almaty', 12600, 'https://satbayev.university', 1934],
  ['Abai Kazakh National Pedagogical University', 'KazNPU', 'Almaty', 14100, 'https://www.kaznpu.kz', 1928],
  ['Karaganda Buketov University', 'KarU', 'Karaganda', 13300, 'https://buketov.edu.kz', 1972],
  ['Suleyman Demirel University', 'SDU', 'Kaskelen', 6300, 'https://sdu.edu.kz', 1996],
  ['KIMEP University', 'KIMEP', 'Almaty', 3400, 'https://www.kimep.kz', 1992],
  ['Astana IT University', 'AITU', 'Astana', 4100, 'https://astanait.edu.kz', 2019],
  ['International Information Technology University', 'IITU', 'Almaty', 4600, 'https://iitu.edu.kz', 2009],
  ['Asfendiyarov Kazakh National Medical University', 'KazNMU', 'Almaty', 11200, 'https://kaznmu.edu.kz', 1930],
  ['Kazakh National Agrarian Research University', 'KazNARU', 'Almaty', 9800, 'https://www.kaznaru.edu.kz', 1929],
  ['M. Auezov South Kazakhstan University', 'SKU', 'Shymkent', 22700, 'https://auezov.edu.kz', 1943],
  ['Toraighyrov University', 'TOU', 'Pavlodar', 11900, 'https://tou.edu.kz', 1960],
  ['D. Serikbayev East Kazakhstan Technical University', 'EKTU', 'Oskemen', 8200, 'https://www.ektu.kz', 1958],
  [
    'Ablai Khan Kazakh University of International Relations and World Languages',
    'KazUIRWL',
    'Almaty',
    8600,
    'https://www.ablaikhan.kz',
    1941,
  ],
  ['Narxoz University', 'Narxoz', 'Almaty', 7600, 'https://narxoz.edu.kz', 1963],
  [
    'Khoja Akhmet Yassawi International Kazakh-Turkish University',
    'IKTU',
    'Turkistan',
    14600,
    'https://ayu.edu.kz',
    1991,
  ],
];

/** Russia: the classic semester/exam system with the five-point scale, unless listed below. */
const ru: Row[] = [
  ['Lomonosov Moscow State University', 'MSU', 'Moscow', 47200, 'https://www.msu.ru', 1755],
  ['Saint Petersburg State University', 'SPbU', 'Saint Petersburg', 32100, 'https://spbu.ru', 1724],
  ['HSE University', 'HSE', 'Moscow', 48600, 'https://www.hse.ru', 1992],
  ['Moscow Institute of Physics and Technology', 'MIPT', 'Dolgoprudny', 8300, 'https://mipt.ru', 1951],
  ['National Research Nuclear University MEPhI', 'MEPhI', 'Moscow', 10900, 'https://mephi.ru', 1942],
  ['Bauman Moscow State Technical University', 'BMSTU', 'Moscow', 19400, 'https://bmstu.ru', 1830],
  ['ITMO University', 'ITMO', 'Saint Petersburg', 14400, 'https://itmo.ru', 1900],
  ['Novosibirsk State University', 'NSU', 'Novosibirsk', 7700, 'https://www.nsu.ru', 1959],
  ['Ural Federal University', 'UrFU', 'Yekaterinburg', 35300, 'https://urfu.ru', 1920],
  ['Kazan Federal University', 'KFU', 'Kazan', 43100, 'https://kpfu.ru', 1804],
  ['Tomsk State University', 'TSU', 'Tomsk', 17500, 'https://www.tsu.ru', 1878],
  [
    'Peter the Great St. Petersburg Polytechnic University',
    'SPbPU',
    'Saint Petersburg',
    34200,
    'https://www.spbstu.ru',
    1899,
  ],
  ['Tomsk Polytechnic University', 'TPU', 'Tomsk', 15200, 'https://tpu.ru', 1896],
  ['RUDN University', 'RUDN', 'Moscow', 37400, 'https://www.rudn.ru', 1960],
  ['MGIMO University', 'MGIMO', 'Moscow', 8800, 'https://mgimo.ru', 1944],
  ['Far Eastern Federal University', 'FEFU', 'Vladivostok', 23300, 'https://www.dvfu.ru', 1899],
  ['Siberian Federal University', 'SibFU', 'Krasnoyarsk', 30400, 'https://www.sfu-kras.ru', 2006],
  ['Skolkovo Institute of Science and Technology', 'Skoltech', 'Moscow', 1300, 'https://www.skoltech.ru', 2011],
];

/** Exceptions to the national defaults: Bologna-style programmes, HSE's ten-point and ITMO's 100-point scales. */
const overrides: Record<string, Partial<UniversitySeed>> = {
  NU: { default_academic_system: 'ects' },
  HSE: { default_academic_system: 'ects', default_gpa_scale: '10' },
  Skoltech: { default_academic_system: 'ects' },
  ITMO: { default_gpa_scale: '100' },
};

/** Seeded but not yet confirmed by a university representative. */
const unverified = new Set(['TOU', 'EKTU', 'IKTU', 'SibFU', 'Skoltech']);

function build(
  rows: Row[],
  country: 'KZ' | 'RU',
  defaults: Pick<UniversitySeed, 'default_academic_system' | 'default_gpa_scale'>,
): UniversitySeed[] {
  return rows.map(([name, short_name, city, student_count, website, founded_year]) => ({
    id: universityId(website),
    name,
    short_name,
    city,
    country,
    student_count,
    is_verified: !unverified.has(short_name),
    ...defaults,
    website,
    founded_year,
    ...overrides[short_name],
  }));
}

export const universities: readonly UniversitySeed[] = [
  ...build(kz, 'KZ', { default_academic_system: 'kz_credit', default_gpa_scale: '4.0' }),
  ...build(ru, 'RU', { default_academic_system: 'ru_classic', default_gpa_scale: '5' }),
];
