"""Demo data for Tagdesk: realistic multilingual search queries and how staff would tag them.

Pure standard library, no database, deterministic for a given seed and fast (a million queries
in about five seconds of CPU). `generate_queries` streams distinct (query, language, country)
triples built combinatorially from per-language shop vocabularies: products with grammatical
gender, agreeing adjectives and audiences, shoe and clothing sizes (children's sizes for
children), prices in the country's currency, how-to and support questions, navigational and
local searches, and regional words ("trainers" in GB, "chamarra" in MX, "grösse" in CH).
Uniqueness is tracked per (language, country) as 64-bit digests, not strings; query shapes whose
combinations run out for a pair are retired, and the rare leftover collision gets a year or a
catalogue number, never a counter. `assign_tags` tags queries unevenly, the way real tagging
work looks.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from zlib import adler32 as _adler32
from zlib import crc32 as _crc32

__all__ = ["PROJECTS", "TAGS", "assign_tags", "generate_queries"]

PROJECTS: list[str] = ["Online shop search", "Help centre", "Brand campaigns"]

# Most-used tags first: projects that only take the first few tags still get a useful set.
# Colours are far apart in CIELAB (pairwise ΔE76 > 34) and mix light and dark chips.
TAGS: list[tuple[str, str]] = [
    ("product", "#312e81"),
    ("transactional", "#15803d"),
    ("informational", "#a5f3fc"),
    ("navigational", "#2563eb"),
    ("brand", "#7c3aed"),
    ("question", "#fde047"),
    ("high intent", "#dc2626"),
    ("needs review", "#fb923c"),
    ("long tail", "#d9f99d"),
    ("price", "#064e3b"),
    ("sale", "#be185d"),
    ("seasonal", "#92400e"),
    ("local", "#6ee7b7"),
    ("support", "#f5d0fe"),
    ("shipping", "#fed7aa"),
    ("returns", "#0891b2"),
    ("competitor", "#111827"),
    ("gift", "#e879f9"),
    ("mobile", "#60a5fa"),
    ("new", "#65a30d"),
]

# --- weights --------------------------------------------------------------------------------

_LANGUAGE_WEIGHTS = {"en": 30, "de": 20, "fr": 12, "es": 12, "it": 8, "nl": 6, "pl": 5,
                     "pt": 4, "sv": 3}
_COUNTRY_WEIGHTS = {
    "en": {"US": 50, "GB": 25, "CA": 10, "AU": 10, "IE": 5},
    "de": {"DE": 75, "AT": 13, "CH": 12},
    "fr": {"FR": 75, "BE": 12, "CA": 8, "CH": 5},
    "es": {"ES": 50, "MX": 35, "AR": 15},
    "it": {"IT": 90, "CH": 10},
    "nl": {"NL": 70, "BE": 30},
    "pl": {"PL": 100},
    "pt": {"BR": 65, "PT": 35},
    "sv": {"SE": 100},
}

# Amounts people put in price searches, by country (already written the local way).
_AMOUNTS = {
    "EUR": "20 25 30 40 50 60 70 80 100 120 150 200 250 300",
    "USD": "20 25 30 40 50 60 75 100 150 200 250 300",
    "GBP": "20 25 30 40 50 60 75 100 150 200",
    "CHF": "30 40 50 80 100 150 200 250 300",
    "PLN": "50 80 100 150 200 250 300 400 500",
    "BRL": "50 80 100 150 200 300 400 500",
    "SEK": "200 300 400 500 800 1000 1500 2000",
    "MXN": "300 500 800 1000 1200 1500 2000 2500",
    "ARS": "20_mil 30_mil 50_mil 80_mil 100_mil 150_mil",
}
_CURRENCY = {"US": "USD", "CA": "USD", "AU": "USD", "GB": "GBP", "IE": "EUR", "DE": "EUR",
             "AT": "EUR", "CH": "CHF", "FR": "EUR", "BE": "EUR", "ES": "EUR", "MX": "MXN",
             "AR": "ARS", "IT": "EUR", "NL": "EUR", "PL": "PLN", "BR": "BRL", "PT": "EUR",
             "SE": "SEK"}

# Fictional brands: the demo organization's own and its competitors'.
_OWN_BRANDS = ("nordkap", "trailfox", "veloria", "alpenrot", "solvik", "lumo")
_COMPETITOR_BRANDS = ("kestrel", "marea", "fjellstad", "bergwelt", "ondina", "skylark",
                      "rivalto", "wavecrest", "kivi", "ostwind")
_BRANDS = _OWN_BRANDS + _COMPETITOR_BRANDS
_MODEL_LINES = ("pro", "air", "trail", "ultra", "flex", "max", "lite", "gtx", "evo", "aero",
                "zero", "speed", "cloud", "summit", "storm", "terra")
_MODEL_NUMBERS = (tuple(str(i) for i in range(1, 13)) + tuple(str(i) for i in range(100, 1000, 50))
                  + tuple(f"v{i}" for i in range(2, 8)))
_YEARS = tuple(str(y) for y in range(2019, 2027))


def _nums(template: str, values) -> str:
    return "\n".join(template.format(v) for v in values)


# --- vocabularies ---------------------------------------------------------------------------
# Entries are separated by new lines or ";". "@GB,IE" limits an entry to those countries.
# products: "text|gender|kind" with kind S shoes, C clothes, W women's clothes, A accessories
# (audience but no size), G gear (neither). Adjectives and audiences list their forms by
# gender, "/"-separated (see _forms); one form means invariable.

_EN = {
    "genders": "s p",
    "products": """
running shoes|p|S; trail running shoes|p|S; hiking boots|p|S; walking shoes|p|S
snow boots|p|S; ankle boots|p|S; sandals|p|S; slippers|p|S; sneakers|p|S@US,CA,AU
trainers|p|S@GB,IE; rain boots|p|S@US,CA; wellies|p|S@GB,IE; soccer cleats|p|S@US,CA
football boots|p|S@GB,IE,AU; winter jacket|s|C; rain jacket|s|C; down jacket|s|C
puffer jacket|s|C; fleece jacket|s|C; ski jacket|s|C; raincoat|s|C; hoodie|s|C; t-shirt|s|C
polo shirt|s|C; jeans|p|C; leggings|p|C; shorts|p|C; hiking pants|p|C@US,CA
hiking trousers|p|C@GB,IE,AU; joggers|p|C; sweater|s|C@US,CA,AU; jumper|s|C@GB,IE,AU
base layer|s|C; cycling shorts|p|C; swimsuit|s|C; dress|s|W; skirt|s|W; sports bra|s|W
bikini|s|W; socks|p|A; compression socks|p|A; gloves|p|A; beanie|s|A; scarf|s|A
backpack|s|B; sunglasses|p|B; bike helmet|s|B; running watch|s|B; gym bag|s|B
ski goggles|p|B; duffel bag|s|G; yoga mat|s|G; sleeping bag|s|G; tent|s|G; water bottle|s|G
headphones|p|G; phone case|s|G; head torch|s|G@GB,IE,AU; headlamp|s|G@US,CA
""",
    "adjectives": """
cheap; waterproof; lightweight; warm|SCWA; breathable|SCW; wide|S; vegan; recycled
insulated|SCG; packable|CBG; comfortable; durable; slim fit|CW; oversized|CW; non slip|S
leather|SAB; wool|CA; organic cotton|CW; affordable; high quality; wide fit|S; windproof|CA
""",
    "colours": """
black; white; navy; olive; beige; red; pink; green; blue; burgundy; khaki; brown
grey@GB,IE,AU; gray@US,CA
""",
    "pre_ratio": 0.85,
    "audiences": """
women|w; men|m; kids|k; girls|wk; boys|mk; womens|w; mens|m; for women|w; for men|m
for kids|k; toddler|k; unisex|u
""",
    "audiences_before": "womens|w; mens|m; kids|k; girls|wk; boys|mk; women's|w; men's|m",
    "audience_before_ratio": 0.5,
    "shoe_sizes": _nums("size {}", range(4, 14)) + "\n" + _nums("size {}.5", range(5, 13)) + """
wide width; extra wide
""" + _nums("uk size {}@GB,IE", range(3, 13)) + "\n" + _nums("size {}c|k@US,CA", range(5, 14))
    + "\n" + _nums("size {}y|k@US,CA", range(1, 7)) + "\n"
    + _nums("kids size {}|k@GB,IE,AU", range(8, 14)) + "\n"
    + _nums("junior size {}|k@GB,IE,AU", range(1, 6)),
    "clothing_sizes": """
size xs; size s; size m; size l; size xl; xl; xxl; 3xl; plus size; petite; tall
size 8; size 10; size 12; size 14; size 16; size 18
size 2t|k@US,CA; size 3t|k@US,CA; size 4t|k@US,CA; size 5t|k@US,CA; youth s|k@US,CA
youth m|k@US,CA; youth l|k@US,CA; youth xl|k@US,CA; age 3-4|k@GB,IE,AU; age 5-6|k@GB,IE,AU
age 7-8|k@GB,IE,AU; age 9-10|k@GB,IE,AU; age 11-12|k@GB,IE,AU; age 13-14|k@GB,IE,AU
""",
    "extras": """
sale; clearance; deals; on sale; review; reviews; online; best rated; discount; outlet
in stock; new collection; free shipping@US,CA,AU; free delivery@GB,IE; buy online; buy
""",
    "prices": """
under ${n}@US,CA,AU; less than ${n}@US,CA,AU; under {n} dollars@US,CA,AU
under £{n}@GB; under {n} pounds@GB; under €{n}@IE; under {n} euro@IE
""",
    "purposes": """
for flat feet|S; for wide feet|S; for plantar fasciitis|S; without laces|S; for overpronation|S
for standing all day|S; for hiking; for running|SCAB; for the gym|SWABG; for winter; for travel
for beginners|SBG; for marathon training|SB; for rainy days|SCWA; for festivals; for camping
for school|SCAB; for work|SCAB; for walking|SCWA; for cold weather; with pockets|CW
with hood|C; for layering|CW
""",
    "best": "best",
    "articles": "",  # a/an is chosen in _article_phrase
    "questions": """
how to wash {ap}; how to clean {p}; where to buy {p}; where can i buy {p}
what size {ps} should i get; how to choose {ap}; {ps} size guide; {ps} true to size
how should {ps} fit; how to dry {ap}; how to store {ap}; how to waterproof {ps}
how often to replace {p}; what to look for in {ap}; {p} {pr}
""",
    "fixed": """
how long does shipping take; how long does delivery take@GB,IE,AU; how do i return an item
where is my order; can i change my delivery address; do you ship {cn}
how much is shipping {cn}; how to use a gift card; how do i cancel my order
what is your return policy; can i pay with paypal; is there a student discount
how do i track my parcel@GB,IE,AU; how do i track my package@US,CA
when will i get my refund; how to apply a discount code; do you price match
can i exchange for a different size; do you have a size guide
""",
    "country_phrase": "US:to the us; GB:to the uk; IE:to ireland; AU:to australia; CA:to canada",
    "support": """
returns; refund; track order; order status; shipping costs@US,CA,AU; delivery costs@GB,IE
delivery time; gift card balance; size guide; contact us; customer service; exchange
free returns; click and collect@GB,IE,AU; store pickup@US,CA; student discount; promo code
discount code; cancel order; invoice; forgot password
""",
    "navigation": """
{b} login; {b} sign in; {b} account; {b} app; {b} store near me; {b} customer service
{b} phone number; {b} outlet; {b} promo code; {b} gift card; {b} returns
{b} opening hours@GB,IE,AU; {b} hours@US,CA; {b} store {c}; {b} size chart
{b} official site; {b} website
""",
    "local": """
{p} {c}; {p} store {c}; {p} near me; {p} shop {c}@GB,IE,AU; sports store {c}
outdoor shop near me; {b} {c}; running store near me; {b} store near me
""",
    "gifts": """
gift for {r}; gifts for {r} {pr}; christmas gifts for {r}; {p} black friday
{p} cyber monday; back to school {p}; {p} summer sale; valentines day gift for {r}
secret santa gift {pr}; stocking stuffers for {r}@US,CA; {p} as a gift
""",
    "recipients": """
her; him; mom@US,CA; mum@GB,IE,AU; dad; runners; hikers; kids; teenagers; boyfriend
girlfriend; grandma; coworkers; cyclists
""",
    "versus": "vs; or; vs.",
    "model_suffixes": "review; reviews; size guide; sale; womens; mens; release date; price",
    "references": "item {k}; sku {k}; style {k}; product code {k}",
    "cities": """
US:new york, chicago, los angeles, houston, seattle, boston, denver, austin, san diego, portland
GB:london, manchester, birmingham, leeds, glasgow, bristol, edinburgh, liverpool
IE:dublin, cork, galway, limerick, waterford
AU:sydney, melbourne, brisbane, perth, adelaide, canberra
CA:toronto, vancouver, calgary, ottawa, montreal, edmonton
""",
}

_DE = {
    "genders": "m f n p",
    "products": """
laufschuhe|p|S; wanderschuhe|p|S; trailrunningschuhe|p|S; turnschuhe|p|S; sneaker|p|S
hallenschuhe|p|S; fußballschuhe|p|S; winterstiefel|p|S; stiefeletten|p|S; gummistiefel|p|S
sandalen|p|S; hausschuhe|p|S@DE,AT; finken|p|S@CH; barfußschuhe|p|S; winterjacke|f|C
regenjacke|f|C; daunenjacke|f|C; softshelljacke|f|C; fleecejacke|f|C; skijacke|f|C
übergangsjacke|f|C; regenmantel|m|C; parka|m|C; hoodie|m|C; kapuzenpullover|m|C; pullover|m|C
t-shirt|n|C; funktionsshirt|n|C; poloshirt|n|C; jeans|f|C; hose|f|C; wanderhose|f|C
trainingshose|f|C; jogginghose|f|C; radhose|f|C; leggings|p|C; shorts|p|C
funktionsunterwäsche|f|C; kleid|n|W; rock|m|W; sport-bh|m|W; badeanzug|m|W; bikini|m|W
socken|p|A; kompressionsstrümpfe|p|A; handschuhe|p|A; mütze|f|A@DE,CH; haube|f|A@AT
schal|m|A; rucksack|m|B; sonnenbrille|f|B; skibrille|f|B; fahrradhelm|m|B@DE,AT
velohelm|m|B@CH; laufuhr|f|B; sporttasche|f|B; schlafsack|m|G; zelt|n|G; yogamatte|f|G
trinkflasche|f|G; kopfhörer|p|G; handyhülle|f|G@DE,AT; natelhülle|f|G@CH; laptoptasche|f|G
fahrradtasche|f|G@DE,AT; velotasche|f|G@CH; isomatte|f|G; stirnlampe|f|G
""",
    # German adjectives are stems: "günstig" gives günstiger/günstige/günstiges before the
    # noun and stays "günstig" after it; "!" marks an invariable one.
    "adjectives": """
günstig; billig; wasserdicht; leicht; warm|SCWA; atmungsaktiv|SCW; breit|S; vegan
nachhaltig; bequem|SCWA; gefüttert|SCA; rutschfest|S; robust; klein|ABG; groß|ABG; neu
winterfest|SC; gebraucht; schmal|S; wasserfest
""",
    "colours": """
schwarz; weiß; blau; dunkelblau; grün; rot; grau; braun; gelb; !beige; !rosa; !oliv
""",
    "pre_ratio": 0.6,
    "audiences": """
damen|w; herren|m; kinder|k; mädchen|wk; jungen|mk; jungs|mk; baby|k; unisex|u; für damen|w
für herren|m; für kinder|k
""",
    "audiences_before": "damen|w; herren|m; kinder|k",
    "audience_before_ratio": 0.35,
    "shoe_sizes": _nums("größe {}", range(36, 48)) + "\n" + _nums("gr. {}", range(38, 47))
    + "\ngröße 42,5; größe 40,5; größe 44,5; weite h; übergröße\n"
    + _nums("größe {}|k", range(22, 37)) + "\n" + _nums("gr. {}|k", range(26, 36)),
    "clothing_sizes": _nums("größe {}", range(34, 56, 2)) + "\n"
    + _nums("größe {}|k", range(92, 177, 12)) + """
größe xs; größe s; größe m; größe l; größe xl; xxl; 3xl; große größen; kurzgröße; langgröße
""",
    "extras": """
sale; angebot; reduziert; test; testsieger; online kaufen; günstig kaufen; outlet; kaufen
bestellen; auf rechnung; vergleich; erfahrungen; schnäppchen; neuheiten; auf raten
""",
    "prices": """
unter {n} euro@DE,AT; unter {n} €@DE,AT; bis {n} €@DE,AT; für {n} euro@DE,AT
unter {n} franken@CH; bis {n} chf@CH; unter {n} chf@CH
""",
    "purposes": """
für breite füße|S; für plattfüße|S; ohne schnürsenkel|S; mit klettverschluss|S
für schmale füße|S; für hallux valgus|S; bei knieschmerzen|S; für den winter; zum wandern
zum laufen|SCAB; für den alltag|SCAB; für die arbeit|SCAB; für anfänger|SBG; für marathon|SB
für nasse tage|SCWA; mit kapuze|C; mit reißverschluss|CWA; für festivals; für den urlaub
für die schule|SCAB; für regen; zum camping
""",
    "best": "bester/beste/bestes/beste",
    "articles": "einen/eine/ein/",
    "questions": """
wo kann ich {p} kaufen; wo {p} kaufen; wie wasche ich {ap}; {p} richtig waschen
{p} richtig pflegen; {p} waschen wie viel grad; welche größe bei {ps}; {ps} welche größe
wie finde ich die richtige größe bei {ps}; {p} worauf achten; {ps} imprägnieren
{p} test {y}; {p} kaufberatung; {p} {pr}
""",
    "fixed": """
wie lange dauert der versand; wie lange dauert die lieferung; wie kann ich etwas zurücksenden
wo ist meine bestellung; wann kommt meine bestellung; kann ich auf rechnung bestellen
kann ich mit paypal bezahlen; wie löse ich einen gutschein ein
wie storniere ich meine bestellung; liefert ihr {cn}; versandkosten {cn}
wie lange dauert der versand {cn}; kann ich die größe umtauschen
gibt es einen studentenrabatt; wie ändere ich meine lieferadresse
""",
    "country_phrase": "DE:nach deutschland; AT:nach österreich; CH:in die schweiz",
    "support": """
rücksendung; retoure; rücksendeschein; umtausch; erstattung; sendungsverfolgung; lieferzeit
versandkosten; gutschein; gutscheincode; rabattcode; größentabelle; kundenservice; kontakt
bestellung stornieren; rechnung; ratenzahlung; lieferadresse ändern; passwort vergessen
newsletter abmelden; paket verfolgen; retourenschein
""",
    "navigation": """
{b} login; {b} anmelden; {b} konto; {b} app; {b} filiale {c}; {b} öffnungszeiten
{b} kundenservice; {b} hotline; {b} outlet; {b} gutscheincode; {b} größentabelle; {b} retoure
{b} in der nähe; {b} online shop; {b} telefonnummer
""",
    "local": """
{p} {c}; {p} in der nähe; {p} kaufen {c}; {p} kaufen in {c}; sportgeschäft {c}
outdoor laden {c}; sportgeschäft in der nähe; {b} {c}; laufladen {c}
""",
    "gifts": """
geschenk für {r}; geschenkideen für {r}; weihnachtsgeschenk für {r}; geschenk für {r} {pr}
{p} black friday; {p} cyber monday; {p} weihnachten; {p} schlussverkauf
{p} sommerschlussverkauf; wichtelgeschenk {pr}; {p} als geschenk
""",
    "recipients": """
freundin; freund; mama; papa; läufer; wanderer; kinder; oma; opa; kollegen; teenager; männer
frauen
""",
    "versus": "vs; oder; vs.",
    "model_suffixes": "test; erfahrungen; damen; herren; sale; größe; preis; neu",
    "references": "art.-nr. {k}; artikelnummer {k}; artikel {k}; modell {k}",
    "cities": """
DE:berlin, hamburg, münchen, köln, frankfurt, stuttgart, düsseldorf, leipzig, nürnberg, dresden
DE:hannover, bremen
AT:wien, graz, linz, salzburg, innsbruck, klagenfurt
CH:zürich, basel, bern, luzern, st. gallen, winterthur
""",
}

_FR = {
    "genders": "ms fs mp fp",
    "products": """
chaussures de running|fp|S; chaussures de course|fp|S; chaussures de randonnée|fp|S
chaussures de trail|fp|S; chaussures de marche|fp|S; baskets|fp|S@FR,BE,CH
espadrilles|fp|S@CA; bottes de pluie|fp|S; bottes de neige|fp|S; bottes d'hiver|fp|S@CA
bottines|fp|S; sandales|fp|S; chaussons|mp|S; pantoufles|fp|S@CA,CH
chaussures de foot|fp|S@FR,BE,CH; crampons de soccer|mp|S@CA; veste d'hiver|fs|C
doudoune|fs|C@FR,BE,CH; manteau d'hiver|ms|C; veste de pluie|fs|C; veste|fs|C
coupe-vent|ms|C; polaire|fs|C; veste de ski|fs|C; parka|fs|C; sweat à capuche|ms|C@FR,BE,CH
coton ouaté|ms|C@CA; pull|ms|C; t-shirt|ms|C; jean|ms|C; legging|ms|C
pantalon de randonnée|ms|C; short|ms|C; jogging|ms|C; collant de running|ms|C
sous-vêtements thermiques|mp|C; maillot de bain|ms|C; robe|fs|W; jupe|fs|W
brassière de sport|fs|W; bikini|ms|W; chaussettes|fp|A; bas|mp|A@CA; gants|mp|A
mitaines|fp|A@CA; bonnet|ms|A@FR,BE,CH; tuque|fs|A@CA; écharpe|fs|A; sac à dos|ms|B
lunettes de soleil|fp|B; casque de vélo|ms|B; montre gps|fs|B; sac de sport|ms|B
masque de ski|ms|B; sac de couchage|ms|G; tente|fs|G; tapis de yoga|ms|G; gourde|fs|G
écouteurs|mp|G; coque de téléphone|fs|G@FR,CA; coque de gsm|fs|G@BE; coque de natel|fs|G@CH
lampe frontale|fs|G; matelas gonflable|ms|G
""",
    "adjectives": """
imperméable/imperméables; léger/légère/légers/légères; chaud/chaude/chauds/chaudes|SCWA
respirant/respirante/respirants/respirantes|SCW; pas cher/pas chère/pas chers/pas chères
large/larges|SCW; confortable/confortables; doublé/doublée/doublés/doublées|SCA
antidérapant/antidérapante/antidérapants/antidérapantes|S
recyclé/recyclée/recyclés/recyclées; en cuir|SAB; en laine|CA; en coton bio|CW; vegan
solide/solides; bon marché
""",
    "colours": """
noir/noire/noirs/noires; blanc/blanche/blancs/blanches; bleu/bleue/bleus/bleues; rouge/rouges
vert/verte/verts/vertes; gris/grise/gris/grises; rose/roses; beige/beiges; bleu marine; kaki
bordeaux; marron; jaune/jaunes
""",
    "pre_ratio": 0.0,
    "audiences": """
femme|w; homme|m; enfant|k; fille|wk; garçon|mk; bébé|k; junior|k; mixte|u; pour femme|w
pour homme|m; pour enfant|k
""",
    "shoe_sizes": _nums("pointure {}", range(36, 48)) + "\n" + _nums("taille {}", range(38, 46))
    + "\n" + _nums("grandeur {}@CA", range(5, 13)) + "\n" + _nums("pointure {}|k", range(22, 36)),
    "clothing_sizes": _nums("taille {}", range(36, 50, 2)) + "\n"
    + _nums("taille {} ans|k", range(2, 17, 2)) + """
taille xs; taille s; taille m; taille l; taille xl; xxl; grande taille
""",
    "extras": """
soldes; promo; en promo; déstockage; avis; test; comparatif; livraison gratuite; en ligne
outlet; pas cher; neuf; d'occasion; achat; prix
""",
    "prices": """
moins de {n} €@FR,BE; à moins de {n} euros@FR,BE; moins de {n} euros@FR,BE; moins de {n} $@CA
moins de {n} dollars@CA; moins de {n} francs@CH; moins de {n} chf@CH
""",
    "purposes": """
pour pieds larges|S; pour pieds plats|S; sans lacets|S; à scratch|S; pour l'hiver
pour la randonnée; pour courir|SCAB; pour la marche|SCWA; pour débutant|SBG
pour marathon|SB; pour la pluie; pour le ski|SCAB; pour le voyage; pour l'école|SCAB
avec capuche|C; pour le trail|SCAB; pour le travail|SCAB; pour la montagne
pour la salle de sport|SWABG; pour le camping
""",
    "best": "meilleur/meilleure/meilleurs/meilleures",
    "articles": "un/une/des/des",
    "questions": """
où acheter {ap}; comment laver {ap}; comment choisir {ap}; comment entretenir {ap}
{ps} quelle taille choisir; {ps} taille grand ou petit; {p} comment choisir
{p} lavage machine; comment imperméabiliser {ap}; où trouver {ap} {pr}; {p} {pr}
""",
    "fixed": """
combien de temps pour la livraison; quel est le délai de livraison; comment retourner un article
où est ma commande; comment annuler ma commande; comment utiliser un code promo
puis-je payer avec paypal; livrez-vous {cn}; frais de livraison {cn}; délai de livraison {cn}
comment échanger une taille; comment suivre mon colis; paiement en 3 fois possible
""",
    "country_phrase": "FR:en france; BE:en belgique; CH:en suisse; CA:au canada",
    "support": """
retour; retour gratuit; remboursement; suivi de commande; suivre mon colis; frais de livraison
délai de livraison; carte cadeau; code promo; guide des tailles; service client; contact
échange; click and collect@FR,BE; annuler commande; facture; paiement en 3 fois@FR,BE
mot de passe oublié; bon de retour
""",
    "navigation": """
{b} connexion; {b} mon compte; {b} appli; {b} application; {b} magasin {c}; {b} horaires
{b} service client; {b} code promo; {b} carte cadeau; {b} guide des tailles; {b} retour
{b} avis; {b} site officiel; {b} numéro de téléphone
""",
    "local": """
{p} {c}; magasin de sport {c}; {p} près de chez moi; {b} {c}; magasin {p} {c}
boutique running {c}
""",
    "gifts": """
cadeau pour {r}; idée cadeau {r}; cadeau de noël pour {r}; cadeau {r} {pr}
{p} black friday; {p} soldes d'hiver; {p} soldes d'été; {p} noël; {p} fête des pères
""",
    "recipients": """
homme; femme; papa; maman; randonneur; coureur; ado; enfant; copine; copain; grand-mère
collègue
""",
    "versus": "ou; vs",
    "model_suffixes": "avis; test; femme; homme; promo; taille; prix",
    "references": "réf. {k}; référence {k}; ref {k}; code article {k}",
    "cities": """
FR:paris, lyon, marseille, toulouse, lille, bordeaux, nantes, strasbourg, nice, montpellier
FR:rennes, grenoble
BE:bruxelles, liège, namur, charleroi, mons
CH:genève, lausanne, fribourg, neuchâtel, sion
CA:montréal, québec, laval, gatineau, sherbrooke
""",
}

_ES = {
    "genders": "ms fs mp fp",
    "products": """
zapatillas running|fp|S@ES,AR; zapatillas de running|fp|S@ES,AR; zapatillas de trail|fp|S@ES,AR
zapatillas|fp|S@ES,AR; tenis para correr|mp|S@MX; tenis|mp|S@MX; botas de montaña|fp|S@ES
botas de senderismo|fp|S; botas de trekking|fp|S@ES,AR; botines|mp|S; sandalias|fp|S
zapatillas de casa|fp|S@ES; pantuflas|fp|S@MX,AR; botas de agua|fp|S@ES
botas de lluvia|fp|S@MX,AR; botas de fútbol|fp|S@ES; tacos de fútbol|mp|S@MX
botines de fútbol|mp|S@AR; chaqueta de invierno|fs|C@ES; chaqueta|fs|C@ES; plumífero|ms|C@ES
chubasquero|ms|C@ES; chamarra|fs|C@MX; chamarra de invierno|fs|C@MX; campera|fs|C@AR
campera de abrigo|fs|C@AR; campera inflable|fs|C@AR; impermeable|ms|C@MX,AR
cortavientos|ms|C@ES; rompevientos|ms|C@MX,AR; forro polar|ms|C
sudadera con capucha|fs|C@ES,MX; sudadera|fs|C@ES,MX; buzo|ms|C@AR; jersey|ms|C@ES
suéter|ms|C@MX; camiseta|fs|C@ES; playera|fs|C@MX; remera|fs|C@AR; vaqueros|mp|C@ES
jeans|mp|C@MX,AR; mallas|fp|C@ES,MX; calzas|fp|C@AR; pantalón de montaña|ms|C@ES
pantalón de trekking|ms|C; pants|ms|C@MX; jogging|ms|C@AR; pantalones cortos|mp|C@ES,MX
short|ms|C@MX,AR; chaqueta de esquí|fs|C@ES; ropa térmica|fs|C; bañador|ms|C@ES
traje de baño|ms|C@MX; malla|fs|C@AR; vestido|ms|W; falda|fs|W@ES,MX; pollera|fs|W@AR
sujetador deportivo|ms|W@ES; top deportivo|ms|W; bikini|ms|W; calcetines|mp|A@ES
calcetas|fp|A@MX; medias|fp|A@AR; guantes|mp|A; gorro|ms|A; bufanda|fs|A; mochila|fs|B
gafas de sol|fp|B@ES; lentes de sol|mp|B@MX,AR; casco de bici|ms|B@ES; casco de bicicleta|ms|B
reloj gps|ms|B; bolsa de deporte|fs|B@ES; maleta deportiva|fs|B@MX; bolso deportivo|ms|B@AR
gafas de esquí|fp|B@ES; saco de dormir|ms|G; bolsa de dormir|fs|G@MX,AR
tienda de campaña|fs|G@ES; casa de campaña|fs|G@MX; carpa|fs|G@AR; esterilla de yoga|fs|G@ES
tapete de yoga|ms|G@MX; mat de yoga|ms|G@AR; botella de agua|fs|G; termo|ms|G@AR
auriculares|mp|G@ES,AR; audífonos|mp|G@MX; funda de móvil|fs|G@ES
funda para celular|fs|G@MX,AR; linterna frontal|fs|G
""",
    "adjectives": """
impermeable/impermeables; ligero/ligera/ligeros/ligeras@ES,MX
liviano/liviana/livianos/livianas@AR; cálido/cálida/cálidos/cálidas|SCWA
transpirable/transpirables|SCW; barato/barata/baratos/baratas
cómodo/cómoda/cómodos/cómodas; ancho/ancha/anchos/anchas|SCW
acolchado/acolchada/acolchados/acolchadas|CA; antideslizante/antideslizantes|S
reciclado/reciclada/reciclados/recicladas; térmico/térmica/térmicos/térmicas; de cuero|SAB
de piel|SAB@ES; de lana|CA; vegano/vegana/veganos/veganas; resistente/resistentes
""",
    "colours": """
negro/negra/negros/negras; blanco/blanca/blancos/blancas; azul/azules; rojo/roja/rojos/rojas
verde/verdes; gris/grises; rosa/rosas; beige; azul marino; marrón/marrones@ES,AR; café@MX
amarillo/amarilla/amarillos/amarillas
""",
    "pre_ratio": 0.0,
    "audiences": """
hombre|m; mujer|w; niño|mk; niña|wk; niños|k; bebé|k; unisex|u; para hombre|m; para mujer|w
de mujer|w; de hombre|m; dama|w@MX; caballero|m@MX; infantil/infantiles|k
""",
    "shoe_sizes": _nums("talla {}@ES", range(36, 47)) + "\n" + _nums("talle {}@AR", range(35, 46))
    + "\n" + _nums("talla {}@MX", range(22, 31)) + "\n" + _nums("talla {}.5@MX", range(22, 29))
    + "\n" + _nums("talla {}|k@ES", range(22, 36)) + "\n" + _nums("talle {}|k@AR", range(22, 35))
    + "\n" + _nums("talla {}|k@MX", range(12, 22)),
    "clothing_sizes": _nums("talla {}@ES", range(36, 50, 2)) + "\n"
    + _nums("talla {} años|k@ES,MX", range(2, 17, 2)) + "\n"
    + _nums("talle {} años|k@AR", range(2, 17, 2))
    + "\n" + _nums("talle {}@AR", range(1, 6)) + """
talla xs@ES; talla s@ES,MX; talla m@ES,MX; talla l@ES,MX; talla xl@ES,MX
talla grande@ES; tallas grandes@ES,MX; talla ch@MX; talla g@MX; talla eg@MX
talle s@AR; talle m@AR; talle l@AR; talle xl@AR; talles grandes@AR; xxl
""",
    "extras": """
oferta; ofertas; rebajas@ES; outlet; opiniones; comprar; comprar online; envío gratis
descuento; liquidación@MX,AR; promoción; precio; segunda mano@ES; en cuotas@AR
meses sin intereses@MX
""",
    "prices": """
menos de {n} euros@ES; por menos de {n} €@ES; menos de {n} pesos@MX,AR; menos de ${n}@MX
hasta {n} pesos@AR; por menos de {n} pesos@MX,AR
""",
    "purposes": """
para pies planos|S; para pie ancho|S; sin cordones|S@ES,AR; sin agujetas|S@MX; con velcro|S
para invierno; para correr|SCAB; para senderismo; para caminar|SCWA; para principiantes|SBG
para maratón|SB; para la lluvia; para esquiar|SCAB; para viajar; para acampar
para el colegio|SCAB@ES,AR; para la escuela|SCAB@MX; con capucha|C
para el gimnasio|SWABG@ES,MX; para el gym|SWABG@AR; para trabajar|SCAB; para la montaña
""",
    "best": "mejor/mejores",
    "articles": "un/una/unos/unas",
    "questions": """
dónde comprar {p}; cómo lavar {p}; cómo elegir {ap}; {ps} qué talla elegir@ES,MX
{ps} qué talle elegir@AR; cómo limpiar {p}; {p} vale la pena; dónde comprar {p} {pr}
{p} {pr}
""",
    "fixed": """
cuánto tarda el envío; cuánto tarda en llegar mi pedido; cómo devolver un pedido
dónde está mi pedido; cómo cancelar mi pedido; cómo usar un código de descuento
puedo pagar con paypal; hacen envíos {cn}; envío {cn}; gastos de envío {cn}@ES
costo de envío {cn}@MX,AR; cómo cambiar la talla@ES,MX; cómo cambiar el talle@AR
puedo pagar en cuotas@AR; puedo pagar a meses sin intereses@MX
""",
    "country_phrase": "ES:a españa; MX:a méxico; AR:a argentina",
    "support": """
devoluciones; devolución; reembolso; seguimiento de pedido; rastrear pedido
gastos de envío@ES; costo de envío@MX,AR; plazo de entrega; tarjeta regalo@ES
tarjeta de regalo@MX,AR; código de descuento; cupón@MX,AR; guía de tallas@ES,MX
guía de talles@AR; atención al cliente; contacto; cambio de talla@ES,MX; cambio de talle@AR
factura; olvidé mi contraseña; envío gratis
""",
    "navigation": """
{b} iniciar sesión; {b} mi cuenta; {b} app; {b} tienda {c}; {b} horario
{b} atención al cliente; {b} teléfono; {b} código de descuento; {b} outlet; {b} opiniones
{b} guía de tallas@ES,MX; {b} guía de talles@AR; {b} tienda oficial; {b} sucursales@MX,AR
""",
    "local": "{p} {c}; tienda de deportes {c}; {p} cerca de mí; {b} {c}; dónde comprar {p} en {c}",
    "gifts": """
regalo para {r}; ideas de regalo para {r}; regalo de navidad para {r}; regalo para {r} {pr}
{p} black friday; {p} rebajas de enero@ES; {p} hot sale@MX,AR; {p} buen fin@MX
{p} cyber monday@MX,AR; amigo invisible {pr}@ES; {p} navidad; regalo día del padre
""",
    "recipients": """
hombre; mujer; papá; mamá; novio; novia; niños; corredores; adolescente; abuela
""",
    "versus": "o; vs",
    "model_suffixes": "opiniones; review; precio; hombre; mujer; oferta; talla@ES,MX; talle@AR",
    "references": "ref. {k}; referencia {k}; código {k}; modelo {k}",
    "cities": """
ES:madrid, barcelona, valencia, sevilla, bilbao, málaga, zaragoza, alicante, murcia, valladolid
MX:ciudad de méxico, cdmx, guadalajara, monterrey, puebla, querétaro, cancún, mérida, tijuana
AR:buenos aires, caba, córdoba, rosario, mendoza, la plata, mar del plata, tucumán
""",
}

_IT = {
    "genders": "ms fs mp fp",
    "products": """
scarpe da running|fp|S; scarpe da corsa|fp|S; scarpe da ginnastica|fp|S
scarpe da trekking|fp|S; scarponi da montagna|mp|S; scarpe da trail|fp|S; sneakers|fp|S
stivali da pioggia|mp|S; stivaletti|mp|S; doposci|mp|S; sandali|mp|S; ciabatte|fp|S
pantofole|fp|S; scarpe da calcio|fp|S; giacca invernale|fs|C; giubbotto|ms|C; piumino|ms|C
giacca antipioggia|fs|C; giacca a vento|fs|C; giacca da sci|fs|C; parka|ms|C; pile|ms|C
felpa con cappuccio|fs|C; felpa|fs|C; maglione|ms|C; maglietta|fs|C; t-shirt|fs|C
jeans|mp|C; leggings|mp|C; pantaloni da trekking|mp|C; pantaloncini|mp|C; tuta|fs|C
costume da bagno|ms|C; intimo termico|ms|C; cappotto|ms|C; vestito|ms|W; gonna|fs|W
reggiseno sportivo|ms|W; bikini|ms|W; calzini|mp|A; calze a compressione|fp|A; guanti|mp|A
berretto|ms|A; cappello|ms|A; sciarpa|fs|A; zaino|ms|B; occhiali da sole|mp|B; casco bici|ms|B
orologio gps|ms|B; borsa sportiva|fs|B; maschera da sci|fs|B; marsupio|ms|B
sacco a pelo|ms|G; tenda da campeggio|fs|G; tappetino yoga|ms|G; borraccia|fs|G
cuffie|fp|G; cover cellulare|fs|G@IT; cover natel|fs|G@CH; lampada frontale|fs|G
materassino|ms|G
""",
    "adjectives": """
impermeabile/impermeabili; leggero/leggera/leggeri/leggere; caldo/calda/caldi/calde|SCWA
traspirante/traspiranti|SCW; economico/economica/economici/economiche
comodo/comoda/comodi/comode; largo/larga/larghi/larghe|SCW
imbottito/imbottita/imbottiti/imbottite|CA; antiscivolo|S
riciclato/riciclata/riciclati/riciclate; termico/termica/termici/termiche; in pelle|SAB
in lana|CA; vegano/vegana/vegani/vegane; resistente/resistenti
""",
    "colours": """
nero/nera/neri/nere; bianco/bianca/bianchi/bianche; blu; rosso/rossa/rossi/rosse; verde/verdi
grigio/grigia/grigi/grigie; rosa; beige; blu navy; marrone/marroni
giallo/gialla/gialli/gialle; bordeaux
""",
    "pre_ratio": 0.0,
    "audiences": """
uomo|m; donna|w; bambino|mk; bambina|wk; bambini|k; ragazzo|m; ragazza|w; neonato|k; unisex|u
da uomo|m; da donna|w; junior|k
""",
    "shoe_sizes": _nums("numero {}", range(36, 48)) + "\n" + _nums("n. {}", range(38, 46))
    + "\n" + _nums("numero {}|k", range(22, 36)),
    "clothing_sizes": _nums("taglia {}", range(40, 58, 2)) + "\n"
    + _nums("taglia {} anni|k", range(2, 17, 2)) + """
taglia xs; taglia s; taglia m; taglia l; taglia xl; xxl; taglie forti
""",
    "extras": """
offerta; offerte; saldi; in sconto; outlet; recensioni; opinioni; prezzo; online
spedizione gratuita; prezzi; nuova collezione
""",
    "prices": """
sotto i {n} euro@IT; meno di {n} €@IT; a meno di {n} euro@IT; sotto i {n} franchi@CH
meno di {n} chf@CH
""",
    "purposes": """
per piedi piatti|S; per pianta larga|S; senza lacci|S; con strappo|S; per l'inverno
per correre|SCAB; per camminare|SCWA; per trekking; per principianti|SBG; per maratona|SB
per la pioggia; per sciare|SCAB; per viaggiare; per la scuola|SCAB; con cappuccio|C
per la palestra|SWABG; per lavoro|SCAB; per la montagna; per il campeggio
""",
    "best": "miglior/migliore/migliori/migliori",
    "articles": "",  # un/uno/una/un' is chosen in _article_phrase
    "questions": """
dove comprare {p}; come lavare {p}; come scegliere {ap}; come pulire {p}
{ps} che taglia prendere; {ps} vestibilità; {p} vale la pena; come impermeabilizzare {p}
{p} {pr}
""",
    "fixed": """
quanto tempo ci vuole per la spedizione; quanto ci mette ad arrivare il mio ordine
come effettuare un reso; dove si trova il mio ordine; come annullare un ordine
come usare un codice sconto; posso pagare con paypal; spedite {cn}; spedizione {cn}
costi di spedizione {cn}; quando arriva il mio ordine; posso cambiare taglia
pagamento alla consegna
""",
    "country_phrase": "IT:in italia; CH:in svizzera",
    "support": """
reso; reso gratuito; rimborso; traccia ordine; stato ordine; costi di spedizione
tempi di consegna; carta regalo; buono regalo; codice sconto; guida alle taglie
servizio clienti; contatti; cambio taglia; fattura; pagamento a rate; password dimenticata
ritiro in negozio
""",
    "navigation": """
{b} accedi; {b} login; {b} il mio account; {b} app; {b} negozio {c}; {b} orari
{b} servizio clienti; {b} numero di telefono; {b} codice sconto; {b} outlet; {b} recensioni
{b} sito ufficiale; {b} negozi
""",
    "local": """
{p} {c}; negozio di articoli sportivi {c}; {p} vicino a me; {b} {c}; negozio running {c}
""",
    "gifts": """
regalo per {r}; idee regalo per {r}; regalo di natale per {r}; regalo per {r} {pr}
{p} black friday; {p} saldi invernali; {p} saldi estivi; {p} natale; regalo festa del papà
""",
    "recipients": """
lui; lei; papà; mamma; fidanzata; fidanzato; bambini; runner; escursionisti; nonna; colleghi
ragazzi
""",
    "versus": "o; vs",
    "model_suffixes": "recensione; opinioni; prezzo; uomo; donna; offerta; taglia",
    "references": "cod. {k}; codice articolo {k}; art. {k}; modello {k}",
    "cities": """
IT:milano, roma, torino, napoli, bologna, firenze, genova, verona, padova, bari, palermo
CH:lugano, bellinzona, locarno, mendrisio, chiasso
""",
}

_NL = {
    "genders": "de het p",
    "products": """
hardloopschoenen|p|S; wandelschoenen|p|S; trailschoenen|p|S; sneakers|p|S; sportschoenen|p|S
voetbalschoenen|p|S; regenlaarzen|p|S; enkellaarsjes|p|S; snowboots|p|S; sandalen|p|S
slippers|p|S; pantoffels|p|S; winterjas|de|C; regenjas|de|C; donsjas|de|C
softshell jas|de|C; ski jas|de|C; parka|de|C; fleece vest|het|C; hoodie|de|C; trui|de|C
t-shirt|het|C; spijkerbroek|de|C; jeans|de|C; legging|de|C; wandelbroek|de|C
korte broek|de|C; joggingbroek|de|C; fietsbroek|de|C; regenpak|het|C; thermo ondergoed|het|C
badpak|het|W; bikini|de|W; jurk|de|W; rok|de|W; sportbeha|de|W; sokken|p|A
compressiesokken|p|A; handschoenen|p|A; muts|de|A; sjaal|de|A; rugzak|de|B; zonnebril|de|B
fietshelm|de|B; sporthorloge|het|B; sporttas|de|B; skibril|de|B; heuptas|de|B
slaapzak|de|G; tent|de|G; yogamat|de|G; drinkfles|de|G; koptelefoon|de|G
telefoonhoesje|het|G@NL; gsm hoesje|het|G@BE; hoofdlamp|de|G; luchtbed|het|G; fietstas|de|G
""",
    # Dutch adjectives: "inflected/base" (goedkope jas, goedkoop badpak); one form = invariable.
    "adjectives": """
goedkope/goedkoop; waterdichte/waterdicht; lichte/licht; warme/warm|SCWA
ademende/ademend|SCW; brede/breed|S; duurzame/duurzaam; gevoerde/gevoerd|SCA
comfortabele/comfortabel; nieuwe/nieuw; vegan; leren|SAB; wollen|CA; stevige/stevig
antislip|S
""",
    "colours": """
zwarte/zwart; witte/wit; blauwe/blauw; donkerblauwe/donkerblauw; rode/rood; groene/groen
grijze/grijs; roze; beige; bruine/bruin; gele/geel; oranje
""",
    "pre_ratio": 0.7,
    "audiences": """
heren|m; dames|w; kinderen|k; kids|k; jongens|mk; meisjes|wk; baby|k; unisex|u; voor heren|m
voor dames|w; voor kinderen|k
""",
    "audiences_before": "heren|m; dames|w; kinder|k",
    "audience_before_ratio": 0.3,
    "shoe_sizes": _nums("maat {}", range(36, 49)) + "\n" + _nums("maat {}|k", range(22, 36)),
    "clothing_sizes": _nums("maat {}", range(36, 50, 2)) + "\n"
    + _nums("maat {}|k", range(92, 177, 12))
    + """
maat xs; maat s; maat m; maat l; maat xl; xxl; grote maten
""",
    "extras": """
sale; aanbieding; korting; uitverkoop; review; test; kopen; online kopen; outlet; goedkoop
gratis verzending; tweedehands; beste koop; met korting; bestellen
""",
    "prices": "onder {n} euro; tot {n} euro; onder de {n} euro; max {n} euro",
    "purposes": """
voor platvoeten|S; voor brede voeten|S; zonder veters|S; met klittenband|S; voor de winter
om te hardlopen|SCAB; voor wandelen; voor beginners|SBG; voor marathon|SB; voor regen
voor skiën|SCAB; voor op reis; voor school|SCAB; met capuchon|C; voor de sportschool|SWABG
voor werk|SCAB; voor de bergen; voor kamperen
""",
    "best": "beste",
    "articles": "een/een/",
    "questions": """
waar koop ik {p}; waar kan ik {p} kopen; hoe was ik {ap}; {p} wassen; welke maat {ps}
hoe kies ik {ap}; {p} schoonmaken; {ps} waterdicht maken; {ps} welke maat kiezen; {p} {pr}
""",
    "fixed": """
hoe lang duurt de verzending; hoe kan ik iets retourneren; waar is mijn bestelling
wanneer wordt mijn pakket bezorgd; hoe annuleer ik mijn bestelling
hoe gebruik ik een kortingscode; kan ik betalen met ideal@NL; kan ik betalen met bancontact@BE
kan ik achteraf betalen; verzenden {cn}; verzendkosten {cn}; levertijd {cn}
kan ik mijn maat ruilen
""",
    "country_phrase": "NL:naar nederland; BE:naar belgië",
    "support": """
retourneren; retour; gratis retour; terugbetaling; bestelling volgen; track en trace
verzendkosten; levertijd; cadeaukaart; cadeaubon; kortingscode; maattabel; klantenservice
contact; ruilen; factuur; achteraf betalen; wachtwoord vergeten; afhaalpunt
""",
    "navigation": """
{b} inloggen; {b} mijn account; {b} app; {b} winkel {c}; {b} openingstijden
{b} klantenservice; {b} telefoonnummer; {b} kortingscode; {b} outlet; {b} ervaringen
{b} maattabel; {b} webshop; {b} winkels
""",
    "local": """
{p} {c}; sportwinkel {c}; {p} in de buurt; {b} {c}; hardloopwinkel {c}; {p} kopen {c}
""",
    "gifts": """
cadeau voor {r}; cadeau ideeën voor {r}; kerstcadeau voor {r}; sinterklaas cadeau {r}
cadeau voor {r} {pr}; {p} black friday; {p} uitverkoop; {p} kerst; vaderdag cadeau
moederdag cadeau
""",
    "recipients": """
hem; haar; vriend; vriendin; papa; mama; kinderen; hardlopers; wandelaars; oma; collega
""",
    "versus": "of; vs",
    "model_suffixes": "review; ervaringen; heren; dames; sale; maat; prijs",
    "references": "artikelnummer {k}; art.nr. {k}; artikel {k}",
    "cities": """
NL:amsterdam, rotterdam, utrecht, den haag, eindhoven, groningen, tilburg, breda, nijmegen
NL:zwolle
BE:antwerpen, gent, brugge, leuven, mechelen, hasselt, brussel
""",
}

_PL = {
    "genders": "m f n p",
    "products": """
buty do biegania|p|S; buty trekkingowe|p|S; buty górskie|p|S; buty sportowe|p|S
sneakersy|p|S; trampki|p|S; korki|p|S; kalosze|p|S; śniegowce|p|S; botki|p|S; sandały|p|S
klapki|p|S; kapcie|p|S; kurtka zimowa|f|C; kurtka przeciwdeszczowa|f|C; kurtka puchowa|f|C
kurtka softshell|f|C; kurtka narciarska|f|C; parka|f|C; płaszcz|m|C; polar|m|C
bluza z kapturem|f|C; bluza|f|C; sweter|m|C; koszulka|f|C; t-shirt|m|C; jeansy|p|C
legginsy|p|C; spodnie trekkingowe|p|C; spodenki|p|C; dres|m|C; bielizna termoaktywna|f|C
kamizelka|f|C; strój kąpielowy|m|C; sukienka|f|W; spódnica|f|W; stanik sportowy|m|W
bikini|n|W; skarpetki|p|A; skarpety kompresyjne|p|A; rękawiczki|p|A; czapka|f|A
szalik|m|A; plecak|m|B; okulary przeciwsłoneczne|p|B; kask rowerowy|m|B
zegarek sportowy|m|B; torba sportowa|f|B; gogle narciarskie|p|B; nerka|f|B; śpiwór|m|G
namiot|m|G; mata do jogi|f|G; bidon|m|G; słuchawki|p|G; etui na telefon|n|G; czołówka|f|G
karimata|f|G; materac dmuchany|m|G
""",
    # Polish adjectives: masculine/feminine/neuter (the neuter form is also the plural).
    "adjectives": """
wodoodporny/wodoodporna/wodoodporne; lekki/lekka/lekkie; ciepły/ciepła/ciepłe|SCWA
oddychający/oddychająca/oddychające|SCW; tani/tania/tanie; wygodny/wygodna/wygodne
szeroki/szeroka/szerokie|S; skórzany/skórzana/skórzane|SAB; wełniany/wełniana/wełniane|CA
antypoślizgowy/antypoślizgowa/antypoślizgowe|S; ocieplany/ocieplana/ocieplane|SCA
nowy/nowa/nowe; solidny/solidna/solidne; wegański/wegańska/wegańskie
""",
    "colours": """
czarny/czarna/czarne; biały/biała/białe; niebieski/niebieska/niebieskie
granatowy/granatowa/granatowe; czerwony/czerwona/czerwone; zielony/zielona/zielone
szary/szara/szare; różowy/różowa/różowe; beżowy/beżowa/beżowe; brązowy/brązowa/brązowe
żółty/żółta/żółte; khaki
""",
    "pre_ratio": 0.3,
    "audiences": """
damski/damska/damskie|w; męski/męska/męskie|m; dziecięcy/dziecięca/dziecięce|k
dla dzieci|k; dla chłopca|mk; dla dziewczynki|wk; dla niemowląt|k; unisex|u; dla kobiet|w
dla mężczyzn|m; młodzieżowy/młodzieżowa/młodzieżowe|k
""",
    "shoe_sizes": _nums("rozmiar {}", range(36, 48)) + "\n" + _nums("rozm. {}", range(38, 46))
    + "\n" + _nums("rozmiar {}|k", range(22, 36)),
    "clothing_sizes": _nums("rozmiar {}", range(36, 50, 2)) + "\n"
    + _nums("rozmiar {}|k", range(92, 165, 12)) + """
rozmiar xs; rozmiar s; rozmiar m; rozmiar l; rozmiar xl; xxl; duże rozmiary
""",
    "extras": """
wyprzedaż; promocja; tanio; opinie; test; ranking; sklep; sklep internetowy; outlet
darmowa dostawa; cena; nowa kolekcja; sklep online; raty 0%
""",
    "prices": "do {n} zł; poniżej {n} zł; za {n} zł; do {n} złotych",
    "purposes": """
na płaskostopie|S; na szeroką stopę|S; bez sznurówek|S; na rzepy|S; na zimę; na wędrówki
na co dzień|SCAB; dla początkujących|SBG; na maraton|SB; na deszcz; na narty|SCAB; w podróż
do szkoły|SCAB; z kapturem|C; na siłownię|SWABG; do pracy|SCAB; w góry; na jesień; na biwak
""",
    "best": "najlepszy/najlepsza/najlepsze",
    "articles": "///",
    # Noun first: Polish needs the accusative after "gdzie kupić", search queries avoid it.
    "questions": """
{p} jak prać; {ps} jaki rozmiar wybrać; {p} gdzie kupić; {p} jak wybrać; {p} czy warto
{p} opinie forum; {ps} jak dobrać rozmiar; {p} jak czyścić; {ps} jak impregnować; {p} {pr}
""",
    "fixed": """
ile trwa dostawa; jak zwrócić zamówienie; gdzie jest moja paczka; jak anulować zamówienie
jak użyć kodu rabatowego; czy mogę zapłacić blikiem; kiedy dostanę zwrot pieniędzy
czy jest darmowa dostawa; jak wymienić rozmiar; dostawa do paczkomatu
czy mogę zapłacić przy odbiorze
""",
    "support": """
zwrot; zwrot pieniędzy; śledzenie przesyłki; status zamówienia; koszt dostawy; czas dostawy
karta podarunkowa; kod rabatowy; tabela rozmiarów; obsługa klienta; kontakt
wymiana rozmiaru; darmowy zwrot; faktura; raty; zapomniałem hasła; paczkomat
odbiór osobisty; reklamacja
""",
    "navigation": """
{b} logowanie; {b} moje konto; {b} aplikacja; {b} sklep {c}; {b} godziny otwarcia
{b} obsługa klienta; {b} numer telefonu; {b} kod rabatowy; {b} outlet; {b} opinie
{b} tabela rozmiarów; {b} sklep internetowy; {b} reklamacja
""",
    "local": "{p} {c}; sklep sportowy {c}; {p} w pobliżu; {b} {c}; {p} sklep {c}",
    "gifts": """
prezent dla {r}; pomysł na prezent dla {r}; prezent na święta dla {r}; prezent dla {r} {pr}
{p} black friday; {p} wyprzedaż zimowa; {p} na prezent; prezent na dzień ojca
prezent na dzień matki; mikołajki prezent {pr}
""",
    "recipients": """
niej; niego; mamy; taty; dziecka; biegacza; chłopaka; dziewczyny; babci; nastolatka; kolegi
żony; męża
""",
    "versus": "czy; vs",
    "model_suffixes": "opinie; test; cena; damskie; męskie; promocja; rozmiar",
    "references": "kod produktu {k}; nr {k}; indeks {k}; model {k}",
    "cities": """
PL:warszawa, kraków, wrocław, poznań, gdańsk, łódź, katowice, szczecin, lublin, białystok
PL:gdynia
""",
}

_PT = {
    "genders": "ms fs mp fp",
    "products": """
tênis de corrida|ms|S@BR; tênis|ms|S@BR; tênis de academia|ms|S@BR
sapatilhas de corrida|fp|S@PT; sapatilhas|fp|S@PT; botas de trilha|fp|S@BR
bota de trekking|fs|S@BR; botas de caminhada|fp|S@PT; sandálias|fp|S; chinelos|mp|S
pantufas|fp|S; botins|mp|S; galochas|fp|S@BR; chuteira|fs|S@BR; chuteiras|fp|S@PT
jaqueta de inverno|fs|C@BR; jaqueta corta vento|fs|C@BR; jaqueta puffer|fs|C@BR
casaco de inverno|ms|C; blusão|ms|C@PT; kispo|ms|C@PT; impermeável|ms|C@PT
corta-vento|ms|C@BR; moletom com capuz|ms|C@BR; moletom|ms|C@BR
sweatshirt com capuz|fs|C@PT; camisola|fs|C@PT; suéter|ms|C@BR; camiseta|fs|C@BR
t-shirt|fs|C@PT; calça jeans|fs|C@BR; calças de ganga|fp|C@PT; legging|fs|C@BR
leggings|fp|C@PT; calça de trilha|fs|C@BR; calças de caminhada|fp|C@PT; shorts|ms|C@BR
calções|mp|C@PT; fato de treino|ms|C@PT; agasalho|ms|C@BR; roupa térmica|fs|C
vestido|ms|W; saia|fs|W; top de ginástica|ms|W@BR; top desportivo|ms|W@PT; biquíni|ms|W
maiô|ms|W@BR; fato de banho|ms|W@PT; meias|fp|A; meias de compressão|fp|A; luvas|fp|A
gorro|ms|A; touca|fs|A@BR; cachecol|ms|A; mochila|fs|B; óculos de sol|mp|B
capacete de bicicleta|ms|B@BR; capacete de ciclismo|ms|B@PT; relógio gps|ms|B
bolsa de academia|fs|B@BR; saco de desporto|ms|B@PT; pochete|fs|B@BR; saco de dormir|ms|G
barraca de camping|fs|G@BR; tenda de campismo|fs|G@PT; tapete de yoga|ms|G
garrafa de água|fs|G; garrafa térmica|fs|G@BR; fone de ouvido|ms|G@BR; auscultadores|mp|G@PT
capinha de celular|fs|G@BR; capa de telemóvel|fs|G@PT; lanterna de cabeça|fs|G
""",
    "adjectives": """
impermeável/impermeáveis; leve/leves; quente/quentes|SCWA; barato/barata/baratos/baratas
confortável/confortáveis; largo/larga/largos/largas|SCW
acolchoado/acolchoada/acolchoados/acolchoadas|CA; antiderrapante/antiderrapantes|S
reciclado/reciclada/reciclados/recicladas; térmico/térmica/térmicos/térmicas; de couro|SAB@BR
de pele|SAB@PT; de lã|CA; vegano/vegana/veganos/veganas; resistente/resistentes
respirável/respiráveis|SCW
""",
    "colours": """
preto/preta/pretos/pretas; branco/branca/brancos/brancas; azul/azuis
vermelho/vermelha/vermelhos/vermelhas; verde/verdes; cinza@BR
cinzento/cinzenta/cinzentos/cinzentas@PT; rosa; bege; azul marinho; marrom@BR
castanho/castanha/castanhos/castanhas@PT; amarelo/amarela/amarelos/amarelas
""",
    "pre_ratio": 0.0,
    "audiences": """
masculino/masculina/masculinos/masculinas|m; feminino/feminina/femininos/femininas|w
infantil/infantis|k; homem|m@PT; mulher|w@PT; criança|k@PT; menino|mk; menina|wk
bebê|k@BR; bebé|k@PT; unissex|u; para homem|m; para mulher|w; juvenil/juvenis|k
""",
    "shoe_sizes": _nums("tamanho {}@BR", range(34, 45)) + "\n"
    + _nums("número {}@BR", range(34, 45)) + "\n" + _nums("tamanho {}|k@BR", range(18, 34))
    + "\n" + _nums("tamanho {}@PT", range(36, 47)) + "\n" + _nums("número {}@PT", range(38, 46))
    + "\n" + _nums("tamanho {}|k@PT", range(22, 36)),
    "clothing_sizes": _nums("tamanho {}", range(36, 50, 2)) + "\n"
    + _nums("tamanho {} anos|k", range(2, 17, 2)) + """
tamanho p@BR; tamanho m@BR; tamanho g@BR; tamanho gg@BR; plus size@BR; tamanho xs@PT
tamanho s@PT; tamanho m@PT; tamanho l@PT; tamanho xl@PT; xxl@PT
""",
    "extras": """
promoção; oferta; preço; comprar; comprar online; frete grátis@BR; portes grátis@PT; outlet
review@BR; opiniões@PT; saldos@PT; liquidação@BR; original@BR; em promoção; com desconto
parcelado@BR
""",
    "prices": """
até r$ {n}@BR; abaixo de r$ {n}@BR; por menos de {n} reais@BR; até {n} €@PT
menos de {n} euros@PT
""",
    "purposes": """
para pé chato|S@BR; para pé plano|S@PT; para pé largo|S; sem cadarço|S@BR
sem atacadores|S@PT; com velcro|S; para o inverno; para correr|SCAB; para caminhada
para trilha@BR; para iniciantes|SBG@BR; para principiantes|SBG@PT; para maratona|SB; para chuva
para esquiar|SCAB; para viagem; para escola|SCAB@BR; para a escola|SCAB@PT; com capuz|C
para academia|SWABG@BR; para o ginásio|SWABG@PT; para trabalho|SCAB; para montanha; para acampar
""",
    "best": "melhor/melhores",
    "articles": "um/uma/uns/umas",
    "questions": """
onde comprar {p}; como lavar {ap}; como escolher {ap}; {ps} qual tamanho escolher
{p} vale a pena; como limpar {p}; {ps} forma grande ou pequeno@BR; {p} é bom; {p} {pr}
""",
    "fixed": """
quanto tempo demora a entrega; como devolver um produto@BR; onde está meu pedido@BR
como cancelar meu pedido@BR; como usar cupom de desconto@BR; posso pagar com pix@BR
posso parcelar no cartão@BR; qual o prazo de entrega; como trocar o tamanho
como devolver uma encomenda@PT; onde está a minha encomenda@PT; como cancelar a encomenda@PT
posso pagar com mb way@PT; como usar um código de desconto@PT
""",
    "support": """
troca e devolução@BR; reembolso; rastrear pedido@BR; status do pedido@BR; frete@BR
prazo de entrega; vale-presente@BR; cupom de desconto@BR; tabela de medidas@BR
atendimento ao cliente@BR; fale conosco@BR; troca de tamanho; nota fiscal@BR
parcelamento@BR; esqueci minha senha@BR; retirar na loja@BR; devoluções@PT
seguir encomenda@PT; estado da encomenda@PT; portes de envio@PT; cartão presente@PT
código de desconto@PT; guia de tamanhos@PT; apoio ao cliente@PT; contactos@PT; fatura@PT
pagamento em prestações@PT; recuperar palavra-passe@PT; levantamento em loja@PT
""",
    "navigation": """
{b} login; {b} minha conta@BR; {b} a minha conta@PT; {b} app; {b} loja {c}; {b} horário
{b} sac@BR; {b} atendimento@BR; {b} apoio ao cliente@PT; {b} cupom@BR
{b} código de desconto@PT; {b} outlet; {b} é confiável@BR; {b} reclame aqui@BR
{b} opiniões@PT; {b} site oficial; {b} telefone
""",
    "local": """
{p} {c}; loja de esportes {c}@BR; loja de desporto {c}@PT; {p} perto de mim; {b} {c}
{p} em {c}
""",
    "gifts": """
presente para {r}; ideias de presente para {r}@BR; ideias de prenda para {r}@PT
presente de natal para {r}; presente para {r} {pr}; {p} black friday; amigo secreto {pr}@BR
presente dia dos pais@BR; presente dia do pai@PT; {p} natal
""",
    "recipients": """
namorado; namorada; pai; mãe; corredor; criança; adolescente; avó; ele; ela; marido
esposa@BR
""",
    "versus": "ou; vs",
    "model_suffixes": "review@BR; opiniões@PT; preço; masculino; feminino; promoção; tamanho",
    "references": "ref. {k}; referência {k}; código {k}; cód. {k}",
    "cities": """
BR:são paulo, rio de janeiro, belo horizonte, curitiba, porto alegre, brasília, salvador
BR:recife, fortaleza, campinas
PT:lisboa, porto, braga, coimbra, faro, aveiro, setúbal, funchal
""",
}

_SV = {
    "genders": "en ett p",
    "products": """
löparskor|p|S; vandringskängor|p|S; vandringsskor|p|S; trailskor|p|S; sneakers|p|S
träningsskor|p|S; fotbollsskor|p|S; gummistövlar|p|S; vinterkängor|p|S; boots|p|S
sandaler|p|S; tofflor|p|S; vinterjacka|en|C; regnjacka|en|C; dunjacka|en|C; skaljacka|en|C
skidjacka|en|C; parkas|en|C; fleecetröja|en|C; hoodie|en|C; luvtröja|en|C; tröja|en|C
t-shirt|en|C; jeans|p|C; tights|p|C; vandringsbyxor|p|C; shorts|p|C; mjukisbyxor|p|C
regnställ|ett|C; underställ|ett|C; vinteroverall|en|C; baddräkt|en|W; bikini|en|W
klänning|en|W; kjol|en|W; sport-bh|en|W; strumpor|p|A; kompressionsstrumpor|p|A
handskar|p|A; vantar|p|A; mössa|en|A; halsduk|en|A; ryggsäck|en|B; solglasögon|p|B
cykelhjälm|en|B; pulsklocka|en|B; träningsväska|en|B; skidglasögon|p|B; midjeväska|en|B
sovsäck|en|G; tält|ett|G; yogamatta|en|G; vattenflaska|en|G; hörlurar|p|G; mobilskal|ett|G
pannlampa|en|G; liggunderlag|ett|G; termos|en|G
""",
    "adjectives": """
billig/billigt/billiga; vattentät/vattentätt/vattentäta; lätt/lätt/lätta
varm/varmt/varma|SCWA; bred/brett/breda|S; vegansk/veganskt/veganska
fodrad/fodrat/fodrade|SCA; bekväm/bekvämt/bekväma; ny/nytt/nya
andningsbar/andningsbart/andningsbara|SCW; slitstark/slitstarkt/slitstarka
halkfri/halkfritt/halkfria|S; hållbar/hållbart/hållbara
""",
    "colours": """
svart/svart/svarta; vit/vitt/vita; blå/blått/blå; marinblå/marinblått/marinblå
röd/rött/röda; grön/grönt/gröna; grå/grått/grå; rosa; beige; brun/brunt/bruna
gul/gult/gula; orange
""",
    "pre_ratio": 0.7,
    "audiences": """
dam|w; herr|m; barn|k; junior|k; flicka|wk; pojke|mk; baby|k; unisex|u; för dam|w; för herr|m
för barn|k; tjej|w; kille|m
""",
    "shoe_sizes": _nums("storlek {}", range(36, 48)) + "\n" + _nums("stl {}", range(38, 46))
    + "\n" + _nums("storlek {}|k", range(22, 36)),
    "clothing_sizes": _nums("storlek {}", range(36, 50, 2)) + "\n"
    + _nums("storlek {}|k", range(90, 171, 10)) + """
storlek xs; storlek s; storlek m; storlek l; storlek xl; xxl; stora storlekar
""",
    "extras": """
rea; på rea; erbjudande; test; bäst i test; recension; köpa; köpa online; outlet; fri frakt
pris; billigt; begagnat; nyheter
""",
    "prices": "under {n} kr; max {n} kr; för under {n} kronor",
    "purposes": """
för plattfot|S; för breda fötter|S; utan snören|S; med kardborre|S; för vintern
för löpning|SCAB; för vandring; för nybörjare|SBG; för maraton|SB; för regn
för skidåkning|SCAB; för resor; för skolan|SCAB; med luva|C; för gymmet|SWABG; för jobbet|SCAB
för fjällen; för camping
""",
    "best": "bästa",
    "articles": "en/ett/",
    "questions": """
var kan man köpa {p}; var köper man {p}; hur tvättar man {ap}; {ps} vilken storlek
hur väljer man {p}; {p} tvätta; {p} värt det; hur impregnerar man {ps}; {ps} storleksguide
{p} {pr}
""",
    "fixed": """
hur lång är leveranstiden; hur returnerar jag en vara; var är mitt paket
hur avbryter jag min beställning; hur använder jag en rabattkod; kan jag betala med swish
kan jag betala med klarna; kan jag byta storlek; när kommer mitt paket; är det fri frakt
hur lång tid tar leveransen
""",
    "support": """
retur; returnera; fri retur; återbetalning; spåra paket; spåra order; orderstatus
fraktkostnad; leveranstid; presentkort; rabattkod; storleksguide; kundtjänst; kontakt
byta storlek; faktura; delbetalning; glömt lösenord; ombud; hämta i butik
""",
    "navigation": """
{b} logga in; {b} mitt konto; {b} app; {b} butik {c}; {b} öppettider; {b} kundtjänst
{b} telefonnummer; {b} rabattkod; {b} outlet; {b} omdömen; {b} storleksguide; {b} butiker
""",
    "local": "{p} {c}; sportbutik {c}; {p} nära mig; {b} {c}; löparbutik {c}",
    "gifts": """
present till {r}; julklapp till {r}; presenttips till {r}; present till {r} {pr}
{p} black friday; {p} mellandagsrea; {p} jul; farsdag present; morsdag present
""",
    "recipients": """
honom; henne; pappa; mamma; pojkvän; flickvän; barn; löpare; tonåring; mormor; farmor
kollega
""",
    "versus": "eller; vs",
    "model_suffixes": "test; recension; dam; herr; rea; storlek; pris",
    "references": "art.nr {k}; artikelnummer {k}; modell {k}",
    "cities": """
SE:stockholm, göteborg, malmö, uppsala, västerås, örebro, linköping, umeå, lund, helsingborg
""",
}

_LANGUAGES = {"en": _EN, "de": _DE, "fr": _FR, "es": _ES, "it": _IT, "nl": _NL, "pl": _PL,
              "pt": _PT, "sv": _SV}

# --- building the per-(language, country) tables ------------------------------------------------

_SLOT = re.compile(r"\{(\w+)\}")
_SLOTS = {"p", "ap", "ps", "b", "b2", "c", "cn", "r", "n", "y", "pr", "k"}
_KINDS = "SCWABG"


def _entries(block: str, country: str) -> list[str]:
    """The entries of a block that apply to `country` (without their "@..." marker)."""
    out = []
    for raw in re.split(r"[;\n]", block):
        entry = raw.strip()
        if not entry:
            continue
        if "@" in entry:
            entry, _, where = entry.rpartition("@")
            if country not in where.split(","):
                continue
            entry = entry.strip()
        out.append(entry)
    return out


def _forms(spec: str, size: int) -> tuple[str, ...]:
    """Forms by gender: one form is invariable; 2 of 4 are singular/plural; 3 of 4 are m/f/n=p."""
    parts = spec.split("/")
    if len(parts) == 1:
        return (parts[0],) * size
    if len(parts) == size:
        return tuple(parts)
    if size == 4 and len(parts) == 2:
        return (parts[0], parts[0], parts[1], parts[1])
    if size == 4 and len(parts) == 3:
        return (parts[0], parts[1], parts[2], parts[2])
    raise ValueError(f"cannot spread {spec!r} over {size} genders")


def _adjective(language: str, spec: str, size: int) -> tuple[tuple[str, ...] | None, tuple]:
    """(forms before the noun or None, forms after the noun)."""
    if language == "de":
        if spec.startswith("!"):
            return (spec[1:],) * size, (spec[1:],) * size
        return (spec + "er", spec + "e", spec + "es", spec + "e"), (spec,) * size
    if language == "nl":
        parts = spec.split("/")
        inflected, base = (parts[0], parts[-1])
        return (inflected, base, inflected), (base,) * size
    forms = _forms(spec, size)
    if language in ("fr", "es", "it", "pt"):
        return None, forms
    return forms, forms


def _article_phrase(language: str, text: str, gender: int, articles: list[str]) -> str:
    if language == "en":
        if gender == 1:
            return text
        return ("an " if text[0] in "aeiou" else "a ") + text
    if language == "it":
        if gender >= 2:
            return text
        vowel = text[0] in "aeiouh"
        if gender == 1:
            return ("un'" if vowel else "una ") + text
        impure = (text[0] in "zxy" or text[:2] in ("gn", "ps")
                  or (text[0] == "s" and text[1:2] not in ("a", "e", "i", "o", "u")))
        return ("uno " if impure else "un ") + text
    article = articles[gender]
    return f"{article} {text}" if article else text


class _Context:
    """Everything one (language, country) pair draws from, with regional words resolved."""

    __slots__ = ("adjectives", "amounts", "audiences", "audiences_bare", "audiences_bare_w",
                 "audiences_before", "audiences_before_w", "audiences_w",
                 "audience_before_ratio", "best", "cities", "clothing_sizes", "colours",
                 "country", "country_phrase", "extras", "fixed", "gifts", "language", "local",
                 "model_suffixes", "navigation", "pre_ratio", "prices", "products",
                 "products_audience", "products_sized", "purposes", "questions", "recipients",
                 "references", "shoe_sizes", "support", "versus")

    def sizes_for(self, kind: str, kid: bool) -> list[str]:
        return (self.shoe_sizes if kind == "S" else self.clothing_sizes)[kid]


def _build(language: str, country: str, data: dict) -> _Context:
    fix: Callable[[str], str] = (lambda s: s.replace("ß", "ss")) if (
        language, country) == ("de", "CH") else (lambda s: s)
    genders = data["genders"].split()
    size = len(genders)

    def entries(key: str) -> list[str]:
        return [fix(e) for e in _entries(data.get(key, ""), country)]

    def templates(key: str) -> list[tuple[str, ...]]:
        out = []
        for entry in entries(key):
            parts = tuple(_SLOT.split(entry))
            unknown = set(parts[1::2]) - _SLOTS
            if unknown:
                raise ValueError(f"{language}: unknown slot {unknown} in {entry!r}")
            out.append(parts)
        return out

    c = _Context()
    c.language, c.country = language, country
    c.pre_ratio = data["pre_ratio"]
    articles = data["articles"].split("/")
    products = []
    for entry in entries("products"):
        text, gender, kind = entry.split("|")
        g = genders.index(gender)
        products.append((text, g, kind, _article_phrase(language, text, g, articles)))
    c.products = products
    c.products_audience = [p for p in products if p[2] != "G"]
    c.products_sized = [p for p in products if p[2] in "SCW"]
    # Adjectives and purposes may be limited to kinds of product ("wide|S": shoes only).
    adjectives = [(_adjective(language, spec, size), kinds or _KINDS)
                  for spec, _, kinds in (e.partition("|") for e in entries("adjectives"))]
    c.adjectives = {kind: [a for a, kinds in adjectives if kind in kinds] for kind in _KINDS}
    purposes = [(text, kinds or _KINDS)
                for text, _, kinds in (e.partition("|") for e in entries("purposes"))]
    c.purposes = {kind: [t for t, kinds in purposes if kind in kinds] for kind in _KINDS}
    c.colours = [_adjective(language, e, size) for e in entries("colours")]
    audiences = [(_forms(spec, size), flag) for spec, flag in
                 (e.split("|") for e in entries("audiences"))]
    # Flags: w women or girls, m men or boys, k children, u anyone. Women's clothes only take
    # w audiences; children get children's sizes.
    c.audiences = audiences
    c.audiences_w = [a for a in audiences if "w" in a[1]]
    # Single-word audiences, for phrases that go on with a preposition ("... for flat feet").
    c.audiences_bare = [a for a in audiences if " " not in a[0][0]]
    c.audiences_bare_w = [a for a in c.audiences_w if " " not in a[0][0]]
    c.audiences_before = [tuple(e.split("|")) for e in entries("audiences_before")]
    c.audiences_before_w = [a for a in c.audiences_before if "w" in a[1]]
    c.audience_before_ratio = data.get("audience_before_ratio", 0.0)
    # Sizes by "for a child?": sizes marked "|k" are children's sizes.
    for name in ("shoe_sizes", "clothing_sizes"):
        marked = [e.partition("|") for e in entries(name)]
        sizes = ([t for t, _, mark in marked if not mark], [t for t, _, mark in marked if mark])
        if not sizes[0] or not sizes[1]:
            raise ValueError(f"{language}-{country}: {name} need adult and children's sizes")
        setattr(c, name, sizes)
    c.extras = entries("extras")
    c.support, c.recipients = entries("support"), entries("recipients")
    c.versus, c.model_suffixes = entries("versus"), entries("model_suffixes")
    c.best = _forms(data["best"], size)
    c.prices, c.questions, c.fixed = templates("prices"), templates("questions"), templates("fixed")
    c.navigation, c.local, c.gifts = (templates("navigation"), templates("local"),
                                      templates("gifts"))
    c.references = templates("references")
    c.amounts = [a.replace("_", " ") for a in _AMOUNTS[_CURRENCY[country]].split()]
    phrases = dict(e.split(":", 1) for e in entries("country_phrase"))
    c.country_phrase = phrases.get(country)
    c.cities = [city.strip() for e in entries("cities") if e.startswith(country + ":")
                for city in e[3:].split(",")]

    for name in ("products", "colours", "audiences", "audiences_w", "audiences_bare",
                 "audiences_bare_w", "shoe_sizes", "clothing_sizes", "extras", "support",
                 "recipients", "versus", "model_suffixes", "prices", "questions", "fixed",
                 "navigation", "local", "gifts", "references", "cities"):
        if not getattr(c, name):
            raise ValueError(f"{language}-{country}: no {name}")
    for kind in _KINDS:
        if not c.adjectives[kind] or not c.purposes[kind]:
            raise ValueError(f"{language}-{country}: no adjectives or purposes for {kind}")
    used = {slot for key in ("prices", "questions", "fixed", "navigation", "local", "gifts")
            for parts in getattr(c, key) for slot in parts[1::2]}
    if "cn" in used and not c.country_phrase:
        raise ValueError(f"{language}-{country}: templates use {{cn}} but no country phrase")
    return c


_CONTEXTS: list[_Context] = [_build(language, country, _LANGUAGES[language])
                             for language, countries in _COUNTRY_WEIGHTS.items()
                             for country in countries]

# One slot per 1/10,000 of traffic: drawing a pair is a single index.
_PAIR_TABLE: tuple[int, ...] = tuple(
    index
    for index, c in enumerate(_CONTEXTS)
    for _ in range(_LANGUAGE_WEIGHTS[c.language] * _COUNTRY_WEIGHTS[c.language][c.country])
)

# --- query shapes ---------------------------------------------------------------------------

_Random = Callable[[], float]


def _pick(seq, r: _Random):
    return seq[int(r() * len(seq))]


def _fill(c: _Context, parts: tuple[str, ...], r: _Random) -> str:
    out = [parts[0]]
    brand = ""
    for i in range(1, len(parts), 2):
        slot = parts[i]
        if slot == "p":
            value = _pick(c.products, r)[0]
        elif slot == "ap":
            value = _pick(c.products, r)[3]
        elif slot == "ps":
            value = _pick(c.products_sized, r)[0]
        elif slot == "b":
            value = brand = _pick(_BRANDS, r)
        elif slot == "b2":
            value = _pick(_BRANDS, r)
            while value == brand:
                value = _pick(_BRANDS, r)
        elif slot == "c":
            value = _pick(c.cities, r)
        elif slot == "cn":
            value = c.country_phrase
        elif slot == "r":
            value = _pick(c.recipients, r)
        elif slot == "n":
            value = _pick(c.amounts, r)
        elif slot == "y":
            value = _pick(_YEARS, r)
        elif slot == "pr":
            value = _fill(c, _pick(c.prices, r), r)
        else:  # "k": a catalogue number
            value = str(100000 + int(r() * 900000))
        out.append(value)
        out.append(parts[i + 1])
    return "".join(out)


def _phrase(c: _Context, r: _Random, product: tuple, audience: bool = False,
            adjective: bool = False, colour: bool = False, bare: bool = False,
            size: bool = False) -> list[str]:
    """Words for a product with optional agreeing adjective, colour, audience (`bare`: a
    single-word one, because a prepositional phrase follows) and size (a child's size when the
    audience is children)."""
    text, g, kind, _ = product
    before: list[str] = []
    after: list[str] = []
    for wanted, choices in ((adjective, c.adjectives[kind]), (colour, c.colours)):
        if wanted:
            pre, post = choices[int(r() * len(choices))]
            if pre is not None and r() < c.pre_ratio:
                before.append(pre[g])
            else:
                after.append(post[g])
    words = before + [text]
    kid = False
    if audience and kind != "G":
        if c.audiences_before and r() < c.audience_before_ratio:
            word, flag = _pick(c.audiences_before_w if kind == "W" else c.audiences_before, r)
            words.insert(0, word)
        else:
            if bare:
                forms, flag = _pick(c.audiences_bare_w if kind == "W" else c.audiences_bare, r)
            else:
                forms, flag = _pick(c.audiences_w if kind == "W" else c.audiences, r)
            if after and r() < 0.5:
                after.insert(0, forms[g])
            else:
                after.append(forms[g])
        kid = "k" in flag
    if size:
        after.append(_pick(c.sizes_for(kind, kid), r))
    return words + after


def _head(c: _Context, r: _Random) -> str:
    return _pick(c.products, r)[0]


def _with_audience(c: _Context, r: _Random) -> str:
    return " ".join(_phrase(c, r, _pick(c.products_audience, r), audience=True))


def _with_adjective(c: _Context, r: _Random) -> str:
    return " ".join(_phrase(c, r, _pick(c.products, r), audience=r() < 0.6, adjective=True))


def _with_colour(c: _Context, r: _Random) -> str:
    return " ".join(_phrase(c, r, _pick(c.products_audience, r), audience=r() < 0.7,
                            colour=True))


def _with_size(c: _Context, r: _Random) -> str:
    product = _pick(c.products_sized, r)
    words = _phrase(c, r, product, audience=r() < 0.8, adjective=r() < 0.2, colour=r() < 0.2,
                    size=True)
    return " ".join(words)


def _with_extra(c: _Context, r: _Random) -> str:
    words = _phrase(c, r, _pick(c.products, r), audience=r() < 0.5, adjective=r() < 0.15)
    words.append(_pick(c.extras, r))
    return " ".join(words)


def _with_price(c: _Context, r: _Random) -> str:
    words = _phrase(c, r, _pick(c.products, r), audience=r() < 0.4, adjective=r() < 0.3)
    words.append(_fill(c, _pick(c.prices, r), r))
    return " ".join(words)


def _with_purpose(c: _Context, r: _Random) -> str:
    product = _pick(c.products, r)
    words = _phrase(c, r, product, audience=r() < 0.4, adjective=r() < 0.25, bare=True)
    purpose = _pick(c.purposes[product[2]], r)
    if purpose.rsplit(" ", 1)[-1] in product[0]:  # not "botas de caminhada para caminhada"
        purpose = _pick(c.purposes[product[2]], r)
    words.append(purpose)
    return " ".join(words)


def _best(c: _Context, r: _Random) -> str:
    product = _pick(c.products, r)
    words = [c.best[product[1]], product[0]]
    x = r()
    if x < 0.35:
        words.append(_pick(_YEARS, r))
    elif x < 0.65:
        words.append(_pick(c.purposes[product[2]], r))
    elif x < 0.85 and product[2] != "G":
        forms, _flag = _pick(c.audiences_w if product[2] == "W" else c.audiences, r)
        words.append(forms[product[1]])
    return " ".join(words)


def _brand_product(c: _Context, r: _Random) -> str:
    words = [_pick(_BRANDS, r)] + _phrase(c, r, _pick(c.products, r), audience=r() < 0.5,
                                          colour=r() < 0.15)
    if r() < 0.25:
        words.append(_pick(c.extras, r))
    return " ".join(words)


def _model(c: _Context, r: _Random) -> str:
    words = [_pick(_BRANDS, r), _pick(_MODEL_LINES, r), _pick(_MODEL_NUMBERS, r)]
    if r() < 0.5:
        words.append(_pick(c.model_suffixes, r))
    return " ".join(words)


def _navigational(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.navigation, r), r)


def _question(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.questions, r), r)


def _support(c: _Context, r: _Random) -> str:
    x = r()
    if x < 0.4:
        return _fill(c, _pick(c.fixed, r), r)
    if x < 0.8:
        return _pick(c.support, r)
    return _pick(_BRANDS, r) + " " + _pick(c.support, r)


def _long_tail(c: _Context, r: _Random) -> str:
    product = _pick(c.products_sized, r)
    short = product[0].count(" ") < 2  # "chaussures de randonnée" leaves less room
    purpose = short and r() < 0.2
    words = _phrase(c, r, product, audience=True, adjective=r() < 0.7,
                    colour=r() < (0.6 if short else 0.3), bare=purpose, size=True)
    if purpose:
        words.append(_pick(c.purposes[product[2]], r))
    elif len(words) <= 6 and r() < 0.25:
        words.append(_pick(c.extras, r))
    return " ".join(words)


def _local(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.local, r), r)


def _compare(c: _Context, r: _Random) -> str:
    if r() < 0.5:
        first = _pick(_BRANDS, r)
        second = _pick(_BRANDS, r)
        while second == first:
            second = _pick(_BRANDS, r)
        text = f"{first} {_pick(c.versus, r)} {second}"
        return text + " " + _pick(c.products, r)[0] if r() < 0.4 else text
    first = _pick(c.products_sized, r)  # shoes against shoes, jackets against jackets
    for _ in range(20):
        second = _pick(c.products_sized, r)
        if second[2] == first[2] and second[0] != first[0]:
            return f"{first[0]} {_pick(c.versus, r)} {second[0]}"
    return f"{first[0]} {_pick(c.versus, r)} {_pick(_BRANDS, r)} {first[0]}"


def _gift(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.gifts, r), r)


_SHAPE_WEIGHTS: tuple[tuple[Callable[[_Context, _Random], str], int], ...] = (
    (_head, 4), (_with_audience, 8), (_with_adjective, 9), (_with_colour, 6), (_with_size, 8),
    (_with_extra, 8), (_with_price, 4), (_with_purpose, 7), (_best, 4), (_brand_product, 7),
    (_model, 4), (_navigational, 5), (_question, 8), (_support, 4), (_long_tail, 8),
    (_local, 3), (_compare, 2), (_gift, 3),
)
_SHAPE_FUNCTIONS = tuple(shape for shape, _weight in _SHAPE_WEIGHTS)
_SHAPE_TABLE = tuple(number for number, (_shape, weight) in enumerate(_SHAPE_WEIGHTS)
                     for _ in range(weight))
_LONG_TAIL_SHAPE = _SHAPE_FUNCTIONS.index(_long_tail)

_ATTEMPTS = 8
# A shape whose recent draws were mostly taken already (its combinations are used up for a
# language and country) is dropped for that pair, so later items don't retry it in vain.
_MISS_DECAY = 0.97
_MISS_LIMIT = 0.75


def _disambiguated(c: _Context, r: _Random, seen: set[int]) -> tuple[str, int]:
    """A long-tail query made unique with a year or a catalogue number (never a bare counter)."""
    base = _long_tail(c, r)
    while True:
        if r() < 0.3:
            text = f"{base} {_pick(_YEARS, r)}"
        else:
            text = f"{base} {_fill(c, _pick(c.references, r), r)}"
        digest = _key(text)
        if digest not in seen:
            return text, digest


def _key(text: str) -> int:
    """A stable 64-bit digest of a text (CRC-32 and Adler-32): deterministic across processes,
    unlike hash(), and far smaller than keeping the strings. A clash between two different
    texts would only make the generator skip one of them, never repeat one."""
    data = text.encode()
    return _crc32(data) << 32 | _adler32(data)


def generate_queries(n: int, seed: int = 0) -> Iterator[tuple[str, str, str]]:
    """Yield n distinct (query, language, country) triples that read like real search queries in
    their own language."""
    if n < 0:
        raise ValueError("n must not be negative")
    return _generate(n, seed)


def _generate(n: int, seed: int) -> Iterator[tuple[str, str, str]]:
    r = random.Random(seed).random
    contexts, pairs, functions = _CONTEXTS, _PAIR_TABLE, _SHAPE_FUNCTIONS
    seen: list[set[int]] = [set() for _ in contexts]
    tables = [_SHAPE_TABLE for _ in contexts]
    misses = [[0.0] * len(functions) for _ in contexts]
    pair_count = len(pairs)
    crc32, adler32, decay, limit = _crc32, _adler32, _MISS_DECAY, _MISS_LIMIT
    for _ in range(n):
        index = pairs[int(r() * pair_count)]
        c = contexts[index]
        taken = seen[index]
        table = tables[index]
        miss = misses[index]
        for _attempt in range(_ATTEMPTS):
            number = table[int(r() * len(table))]
            text = functions[number](c, r)
            data = text.encode()
            digest = crc32(data) << 32 | adler32(data)  # _key(text), inlined: this is hot
            if digest not in taken:
                miss[number] *= decay
                break
            rate = miss[number] = miss[number] * decay + (1.0 - decay)
            if rate > limit and number != _LONG_TAIL_SHAPE:
                tables[index] = table = tuple(x for x in table if x != number)
        else:
            text, digest = _disambiguated(c, r, taken)
        taken.add(digest)
        yield text, c.language, c.country


# --- tagging --------------------------------------------------------------------------------

_TAG = {name: index for index, (name, _colour) in enumerate(TAGS)}

# Words that make a tag likely, per language ("*": every language).
_TAG_WORDS: dict[str, dict[str, str]] = {
    "*": {
        "navigational": "login app outlet",
        "informational": "vs vs. test review",
        "sale": "sale outlet",
        "seasonal": "black cyber",
        "mobile": "app",
        "new": "2025 2026",
        "price": "chf kr zł € r$",
    },
    "en": {
        "question": "how what where which when can do is are",
        "transactional": "buy shop online",
        "informational": "reviews best sizing fit",
        "navigational": "sign account website site hours",
        "price": "under cheap affordable dollars pounds euro",
        "sale": "clearance deals discount",
        "support": "customer service contact password invoice cancel",
        "returns": "returns return refund exchange",
        "shipping": "shipping delivery ship track parcel package pickup",
        "gift": "gift gifts stocking santa",
        "seasonal": "christmas winter summer valentines school",
        "local": "near store",
        "mobile": "phone",
        "new": "new",
        "high intent": "size uk",
    },
    "de": {
        "question": "wie wo was welche wann kann gibt worauf",
        "transactional": "kaufen bestellen",
        "informational": "testsieger erfahrungen vergleich kaufberatung",
        "navigational": "anmelden konto öffnungszeiten shop",
        "price": "unter günstig günstige günstiger günstiges billig billige euro franken",
        "sale": "angebot reduziert schnäppchen",
        "support": "kundenservice hotline kontakt telefonnummer passwort rechnung stornieren",
        "returns": "retoure rücksendung rücksendeschein umtausch erstattung zurücksenden "
                   "retourenschein",
        "shipping": "versand versandkosten lieferzeit lieferung sendungsverfolgung paket liefert",
        "gift": "geschenk geschenkideen weihnachtsgeschenk gutschein wichtelgeschenk",
        "seasonal": "weihnachten weihnachtsgeschenk schlussverkauf sommerschlussverkauf winter",
        "local": "nähe filiale",
        "mobile": "handyhülle natelhülle",
        "new": "neu neue neuer neues neuheiten",
        "high intent": "größe grösse gr.",
    },
    "fr": {
        "question": "comment où quelle quel combien puis-je livrez-vous",
        "transactional": "achat acheter",
        "informational": "avis comparatif",
        "navigational": "connexion compte appli application horaires officiel",
        "price": "moins euros francs cher chère chers chères marché",
        "sale": "soldes promo déstockage",
        "support": "service contact facture mot annuler",
        "returns": "retour retourner remboursement échange échanger",
        "shipping": "livraison colis suivi suivre",
        "gift": "cadeau",
        "seasonal": "noël hiver d'hiver d'été fête",
        "local": "près magasin boutique",
        "mobile": "téléphone gsm natel",
        "new": "neuf nouveau nouvelle",
        "high intent": "taille pointure grandeur",
    },
    "es": {
        "question": "cómo dónde qué cuánto puedo hacen",
        "transactional": "comprar",
        "informational": "opiniones",
        "navigational": "sesión cuenta horario oficial sucursales",
        "price": "menos pesos euros barato barata baratos baratas precio cuotas intereses",
        "sale": "oferta ofertas rebajas descuento liquidación promoción",
        "support": "atención contacto teléfono contraseña factura cancelar",
        "returns": "devoluciones devolución devolver reembolso cambio cambiar",
        "shipping": "envío envíos rastrear seguimiento entrega",
        "gift": "regalo invisible",
        "seasonal": "navidad hot buen invierno enero",
        "local": "cerca tienda",
        "mobile": "móvil celular",
        "new": "nuevo nueva",
        "high intent": "talla talle",
    },
    "it": {
        "question": "come dove quanto quando posso spedite",
        "transactional": "comprare",
        "informational": "recensioni recensione opinioni",
        "navigational": "accedi account orari ufficiale negozi",
        "price": "sotto meno prezzo prezzi economico economica economici economiche franchi",
        "sale": "offerta offerte saldi sconto",
        "support": "servizio contatti telefono password fattura annullare",
        "returns": "reso rimborso",
        "shipping": "spedizione consegna traccia",
        "gift": "regalo buono",
        "seasonal": "natale invernali estivi l'inverno festa",
        "local": "vicino negozio",
        "mobile": "cellulare natel",
        "new": "nuova nuovo",
        "high intent": "taglia numero n.",
    },
    "nl": {
        "question": "hoe waar welke wanneer kan",
        "transactional": "kopen bestellen",
        "informational": "ervaringen",
        "navigational": "inloggen account openingstijden webshop winkels",
        "price": "onder tot goedkoop goedkope max euro",
        "sale": "aanbieding korting uitverkoop",
        "support": "klantenservice contact telefoonnummer wachtwoord factuur annuleer",
        "returns": "retourneren retour terugbetaling ruilen",
        "shipping": "verzending verzenden verzendkosten levertijd pakket bezorgd track",
        "gift": "cadeau cadeaukaart cadeaubon kerstcadeau",
        "seasonal": "kerst kerstcadeau sinterklaas vaderdag moederdag winter",
        "local": "buurt winkel sportwinkel",
        "mobile": "telefoonhoesje gsm",
        "new": "nieuw nieuwe",
        "high intent": "maat",
    },
    "pl": {
        "question": "jak gdzie ile czy kiedy jaki",
        "transactional": "sklep kupić",
        "informational": "opinie ranking forum",
        "navigational": "logowanie konto aplikacja godziny internetowy",
        "price": "poniżej tani tania tanie tanio cena złotych najtańszy",
        "sale": "wyprzedaż promocja",
        "support": "obsługa kontakt telefonu hasła faktura reklamacja anulować",
        "returns": "zwrot zwrócić wymiana wymienić",
        "shipping": "dostawa dostawy wysyłka paczka paczkomat przesyłki paczkomatu",
        "gift": "prezent mikołajki",
        "seasonal": "święta zimę zimowa mikołajki",
        "local": "pobliżu sportowy",
        "mobile": "telefon aplikacja",
        "new": "nowy nowa nowe",
        "high intent": "rozmiar rozm.",
    },
    "pt": {
        "question": "como onde qual quanto posso",
        "transactional": "comprar",
        "informational": "opiniões confiável reclame",
        "navigational": "conta horário oficial",
        "price": "até abaixo menos reais euros barato barata baratos baratas preço parcelado",
        "sale": "promoção oferta saldos liquidação desconto",
        "support": "atendimento sac apoio contactos telefone senha palavra-passe fatura",
        "returns": "devolução devoluções devolver reembolso troca trocar",
        "shipping": "entrega frete rastrear encomenda portes envio",
        "gift": "presente prenda vale-presente secreto",
        "seasonal": "natal inverno pais pai",
        "local": "perto loja",
        "mobile": "celular telemóvel",
        "new": "novo nova",
        "high intent": "tamanho número",
    },
    "sv": {
        "question": "hur var vilken när kan är",
        "transactional": "köpa köper",
        "informational": "recension omdömen omdöme bäst",
        "navigational": "logga konto öppettider butiker",
        "price": "under max billig billigt billiga kronor pris",
        "sale": "rea erbjudande mellandagsrea",
        "support": "kundtjänst kontakt telefonnummer lösenord faktura avbryter",
        "returns": "retur returnera returnerar återbetalning byta",
        "shipping": "frakt fraktkostnad leverans leveranstid leveranstiden leveransen paket ombud",
        "gift": "present presenttips julklapp presentkort",
        "seasonal": "jul julklapp farsdag morsdag vintern",
        "local": "nära butik sportbutik",
        "mobile": "mobilskal",
        "new": "ny nytt nya nyheter",
        "high intent": "storlek stl",
    },
}

# How often staff pick each tag by hand, beyond what the words suggest: a few tags carry most
# of the work and the rest are rare.
_FILL_WEIGHTS = {
    "product": 40, "transactional": 30, "informational": 14, "navigational": 3,
    "high intent": 4, "needs review": 5, "long tail": 1, "brand": 1, "question": 0.5,
    "price": 1, "sale": 1, "seasonal": 1, "local": 0.5, "support": 0.5, "shipping": 0.3,
    "returns": 0.3, "competitor": 0.3, "gift": 0.3, "mobile": 0.3, "new": 0.3,
}
_FILL_TABLE = tuple(_TAG[name] for name, weight in _FILL_WEIGHTS.items()
                    for _ in range(int(weight * 10)))
_UNTAGGED_SHARE = 0.35
# How reliably staff add a tag that a word suggests: always-obvious ones (a brand, a question,
# a return) nearly always, judgement calls (is this "high intent"?) less often.
_FOLLOW_DEFAULT = 0.5
_FOLLOW = {"brand": 0.95, "question": 0.95, "returns": 0.8, "shipping": 0.8, "support": 0.7,
           "navigational": 0.7, "gift": 0.7, "product": 0.4, "competitor": 0.4,
           "high intent": 0.25, "long tail": 0.2, "new": 0.35, "local": 0.45}
_FOLLOW_TABLE = tuple(_FOLLOW.get(name, _FOLLOW_DEFAULT) for name, _colour in TAGS)


def _keyword_tables() -> dict[str, dict[str, tuple[int, ...]]]:
    tables: dict[str, dict[str, tuple[int, ...]]] = {}
    for language in _LANGUAGES:
        table: dict[str, tuple[int, ...]] = {}

        def add(word: str, tag: str, table=table) -> None:
            if _TAG[tag] not in table.get(word, ()):
                table[word] = table.get(word, ()) + (_TAG[tag],)

        for source in (_TAG_WORDS["*"], _TAG_WORDS[language]):
            for tag, words in source.items():
                for word in words.split():
                    add(word, tag)
        for brand in _OWN_BRANDS:
            add(brand, "brand")
        for brand in _COMPETITOR_BRANDS:
            add(brand, "brand")
            add(brand, "competitor")
        for c in _CONTEXTS:
            if c.language == language:
                for city in c.cities:
                    for word in city.split():
                        if len(word) >= 4:
                            add(word, "local")
                for product in c.products:
                    word = product[0].split()[0]
                    if len(word) >= 3 and word not in table:
                        add(word, "product")
        tables[language] = table
    return tables


_KEYWORDS = _keyword_tables()
_FALLBACK_KEYWORDS = _KEYWORDS["en"]
_CURRENCY_SIGNS = frozenset("$£€")
_PRICE, _LONG_TAIL = _TAG["price"], _TAG["long tail"]


def assign_tags(index: int, query: str, language: str, country: str,
                rng: random.Random) -> list[int]:
    """Indices into TAGS for the query at position index: spread unevenly as real tagging is
    (a few tags on many queries, most tags on few; about 35% of queries have no tag; some have
    2-3); where cheap, plausible (a query containing a brand word gets "brand", a question word
    gets "question").

    Only the query's words and `rng` decide; `index` and `country` are accepted so callers can
    pass what they have.
    """
    r = rng.random
    if r() < _UNTAGGED_SHARE:
        return []
    keywords = _KEYWORDS.get(language, _FALLBACK_KEYWORDS)
    tags: list[int] = []
    words = query.split()
    for word in words:
        hits = keywords.get(word)
        if hits is None:
            if word[0] in _CURRENCY_SIGNS:
                hits = (_PRICE,)
            else:
                continue
        for tag in hits:
            if tag not in tags and r() < _FOLLOW_TABLE[tag]:
                tags.append(tag)
    if len(words) >= 5 and _LONG_TAIL not in tags and r() < 0.3:
        tags.append(_LONG_TAIL)
    x = r()
    wanted = 1 if x < 0.62 else 2 if x < 0.9 else 3
    while len(tags) < wanted:
        tag = _FILL_TABLE[int(r() * len(_FILL_TABLE))]
        if tag not in tags:
            tags.append(tag)
    return tags[:3]
